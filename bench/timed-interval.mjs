// One interval of a run as the benches time it: advance the simulation and take the frame (every
// target's samples), then scrape every target through the pipeline (the SDK's reader with
// gpusynth's MetricProducer, then the sink); the CPU time of each part.

/** This process's CPU time since `since` (a process.cpuUsage()), ms. */
export function cpuMs(since) {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** `run` advanced to simulated `t` and its frame scraped through `pipeline`: the frame, and what each part cost. */
export async function timedInterval(run, pipeline, t) {
  const frameStart = process.cpuUsage();
  run.advanceTo(t);
  const frame = run.frame();
  const frameMs = cpuMs(frameStart);
  const pipelineStart = process.cpuUsage();
  await pipeline.scrape(frame.targets, run.blueprint.time.start + t);
  return { frame, frameMs, pipelineMs: cpuMs(pipelineStart) };
}
