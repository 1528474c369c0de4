/**
 * One emulated scrape target in the OpenTelemetry SDK: a MeterProvider whose Resource is the
 * target's (the JS SDK binds one Resource to one MeterProvider), a Meter with the prometheus
 * receiver's scope, and an observable instrument per metric family that reports the target's
 * latest samples when the reader collects. Names verbatim, no unit, double values.
 */

import type { MetricFamily, Sample, ScrapeTarget } from "@gpusynth/constructs";
import { type Attributes, type ObservableResult, ValueType } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type CollectionResult, MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, targetResourceAttributes } from "./receiver.js";

/** A reader collected on demand: gpusynth decides when a target is "scraped". */
class OnDemandReader extends MetricReader {
  constructor() {
    // A KSM target carries thousands of series per family; the SDK's default limit (2000 per
    // instrument) would fold the rest into an overflow series.
    super({ cardinalitySelector: () => 1_000_000 });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export class TargetProvider {
  private readonly reader = new OnDemandReader();
  private readonly provider: MeterProvider;
  private readonly meter;
  private readonly instruments = new Set<string>();
  private current = new Map<string, Sample[]>();

  constructor(readonly target: ScrapeTarget) {
    this.provider = new MeterProvider({ resource: resourceFromAttributes(targetResourceAttributes(target)), readers: [this.reader] });
    this.meter = this.provider.getMeter(RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION);
  }

  /** Sets what the target exposes now and collects it through the SDK. */
  async scrape(samples: readonly Sample[]): Promise<ResourceMetrics> {
    const byFamily = new Map<string, Sample[]>();
    for (const s of samples) {
      this.ensureInstrument(s.family);
      const list = byFamily.get(s.family.name);
      if (list === undefined) byFamily.set(s.family.name, [s]);
      else list.push(s);
    }
    this.current = byFamily;
    const result: CollectionResult = await this.reader.collect();
    if (result.errors.length > 0) throw new AggregateError(result.errors, `collecting ${this.target.job} failed`);
    return result.resourceMetrics;
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }

  private ensureInstrument(family: MetricFamily): void {
    if (this.instruments.has(family.name)) return;
    this.instruments.add(family.name);
    const options = { description: family.help, valueType: ValueType.DOUBLE };
    const instrument =
      family.type === "counter"
        ? this.meter.createObservableCounter(family.name, options)
        : this.meter.createObservableGauge(family.name, options);
    instrument.addCallback((result: ObservableResult<Attributes>) => {
      for (const s of this.current.get(family.name) ?? []) result.observe(s.value, s.labels);
    });
  }
}
