/**
 * Log records through the OpenTelemetry SDK: one LoggerProvider per log-source resource (a
 * Kubernetes object for k8s_events records, the scheduler's container for filelog records),
 * with the receiver's instrumentation scope, all feeding one processor that hands each drain's
 * records to a sink in one export. Records keep the receiver's timestamps and severities.
 */

import { K8S_EVENTS_SCOPE, type LogRecordOut } from "@gpusynth/constructs";
import type { SeverityNumber } from "@opentelemetry/api-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from "@opentelemetry/sdk-logs";

export interface LogsSink {
  /** Resolves false when the records could not be delivered (after the exporter's retries). */
  export(records: ReadableLogRecord[]): Promise<boolean>;
  shutdown(): Promise<void>;
}

/** Collects what every provider's loggers emit until the pipeline exports it. */
class CollectingProcessor implements LogRecordProcessor {
  records: SdkLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

interface ProviderEntry {
  readonly provider: LoggerProvider;
  readonly logger: ReturnType<LoggerProvider["getLogger"]>;
}

/** Providers kept for resources seen recently; older ones are shut down past this many. */
const MAX_PROVIDERS = 4096;

export interface LogsReport {
  readonly records: number;
  readonly failed: number;
}

export class LogsPipeline {
  private readonly processor = new CollectingProcessor();
  private readonly providers = new Map<string, ProviderEntry>();

  /**
   * Each resource object's provider key (receiver and resource), made once: a key made anew for
   * every record would be hashed anew too, over the resource's whole JSON.
   */
  private readonly resourceKeys = new WeakMap<object, { readonly receiver: string; readonly key: string }>();
  /** The provider the last record went to: a source's records come in runs of one resource. */
  private last: { readonly key: string; readonly entry: ProviderEntry } | undefined;

  constructor(private readonly sink: LogsSink) {}

  async export(records: readonly LogRecordOut[]): Promise<LogsReport> {
    if (records.length === 0) return { records: 0, failed: 0 };
    for (const record of records) {
      const entry = this.providerFor(record);
      // One shape for every record, absent fields undefined (the SDK reads them so): spreading
      // optional fields in made each record's object on V8's slow path.
      entry.logger.emit({
        timestamp: record.timeMs,
        severityNumber: record.severityNumber as SeverityNumber | undefined,
        severityText: record.severityText,
        body: record.body,
        attributes: record.attributes,
      });
    }
    const emitted = this.processor.records;
    this.processor.records = [];
    const delivered = await this.sink.export(emitted.map(withReceiverScope));
    this.trim();
    return { records: emitted.length, failed: delivered ? 0 : emitted.length };
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.providers.values()].map(({ provider }) => provider.shutdown()));
    await this.sink.shutdown();
  }

  private providerFor(record: LogRecordOut): ProviderEntry {
    // Sources share one resource object across their records: it is serialised once.
    let known = this.resourceKeys.get(record.resource);
    if (known?.receiver !== record.receiver) {
      known = { receiver: record.receiver, key: `${record.receiver}\u0000${JSON.stringify(record.resource)}` };
      this.resourceKeys.set(record.resource, known);
    }
    const key = known.key;
    // Already the most recent: the Map's order stays as it is.
    if (this.last?.key === key) return this.last.entry;
    let entry = this.providers.get(key);
    if (entry === undefined) {
      const provider = new LoggerProvider({ resource: resourceFromAttributes(record.resource), processors: [this.processor] });
      // The filelog receiver sets no scope name; the SDK needs one, so withReceiverScope clears it.
      const logger =
        record.receiver === "k8s_events"
          ? provider.getLogger(K8S_EVENTS_SCOPE.name, K8S_EVENTS_SCOPE.version)
          : provider.getLogger(FILELOG_PLACEHOLDER);
      entry = { provider, logger };
    } else {
      this.providers.delete(key); // re-inserted below: Map order is recency
    }
    this.providers.set(key, entry);
    this.last = { key, entry };
    return entry;
  }

  private trim(): void {
    while (this.providers.size > MAX_PROVIDERS) {
      const [key, oldest] = this.providers.entries().next().value as [string, { provider: LoggerProvider }];
      this.providers.delete(key);
      void oldest.provider.shutdown();
    }
  }
}

const FILELOG_PLACEHOLDER = "gpusynth/filelog";

/**
 * The filelog receiver's scope, one object for every record: the SDK's serializer (and
 * gpusynth's encoder with it) groups a resource's records by scope object, so a batch of a
 * container's lines is one ScopeLogs, as a collector sends it, not one ScopeLogs per line.
 */
const FILELOG_SCOPE: ReadableLogRecord["instrumentationScope"] = Object.freeze({ name: "" });

/**
 * What the receivers set that the SDK decides otherwise: filelog records carry an empty scope
 * (pkg/stanza converter) and are observed when read (here: when written); k8s_events sets no
 * observed timestamp at all. The SDK stamps "now" and needs a scope name, so both are replaced.
 */
/** k8s_events' observed time: none (one frozen pair for every record). */
const NOT_OBSERVED: ReadableLogRecord["hrTimeObserved"] = Object.freeze([0, 0]) as unknown as ReadableLogRecord["hrTimeObserved"];

function withReceiverScope(record: SdkLogRecord): ReadableLogRecord {
  const filelog = record.instrumentationScope.name === FILELOG_PLACEHOLDER;
  // One shape for every record, absent fields undefined (every serializer reads them so; the
  // logs-encoder test compares with the SDK's): optional fields spread in cost more than the rest.
  return {
    hrTime: record.hrTime,
    hrTimeObserved: filelog ? record.hrTime : NOT_OBSERVED,
    spanContext: record.spanContext,
    severityText: record.severityText,
    severityNumber: record.severityNumber,
    body: record.body,
    resource: record.resource,
    instrumentationScope: filelog ? FILELOG_SCOPE : record.instrumentationScope,
    attributes: record.attributes,
    droppedAttributesCount: record.droppedAttributesCount,
  };
}
