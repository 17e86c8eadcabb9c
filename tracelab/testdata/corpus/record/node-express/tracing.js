// Loaded with `node --require ./tracing.js <service>.js`, before express, knex
// and pg, so the instrumentations can patch them. Spans go out as OTLP/HTTP
// JSON to OTLP_TRACES_URL (collector.js in the recording script).
'use strict';
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express');
const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg');
const { KnexInstrumentation } = require('@opentelemetry/instrumentation-knex');

const exporter = new OTLPTraceExporter({ url: process.env.OTLP_TRACES_URL });
const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME,
  // A large queue and a short delay: no span dropped under the load, and the
  // last ones out soon after it.
  // (sdk-trace 3.x: one options object, the exporter in it.)
  spanProcessors: [new BatchSpanProcessor({
    exporter, maxQueueSize: 200000, maxExportBatchSize: 2000, scheduledDelayMillis: 500,
  })],
  instrumentations: [
    new HttpInstrumentation(),
    new ExpressInstrumentation(),
    // PG_ENHANCED=1: record the bound parameter values (db.postgresql.values).
    new PgInstrumentation({ enhancedDatabaseReporting: process.env.PG_ENHANCED === '1' }),
    new KnexInstrumentation(),
  ],
});
sdk.start();

let stopping = false;
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    sdk.shutdown().catch((e) => console.error('otel shutdown', e)).finally(() => process.exit(0));
  });
}
