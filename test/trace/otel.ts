/** OpenTelemetry SDK set-up of the trace tests: in-memory span and metric exporters, no globals unless asked. */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';

/** A tracer and a meter provider writing to memory. */
export function memoryOtel() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: (): ReadableSpan[] => spans.getFinishedSpans(),
    /** Every data point of metric `name` after a flush. */
    async metric(name: string): Promise<Array<DataPoint<number | Histogram>>> {
      await reader.forceFlush();
      const batches = metricExporter.getMetrics();
      const last = batches[batches.length - 1];
      const points: Array<DataPoint<number | Histogram>> = [];
      for (const scope of last?.scopeMetrics ?? [])
        for (const m of scope.metrics)
          if (m.descriptor.name === name) points.push(...(m.dataPoints as Array<DataPoint<number | Histogram>>));
      return points;
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The spans as a tree of names: `parent > child` lines, in start order. */
export function tree(spans: ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const path = (s: ReadableSpan): string => {
    const parent = s.parentSpanContext?.spanId ? byId.get(s.parentSpanContext.spanId) : undefined;
    return parent ? `${path(parent)} > ${s.name}` : s.name;
  };
  return [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]).map(path);
}
