// A minimal OTLP/HTTP JSON receiver for the recording: every POST /v1/traces
// body (an ExportTraceServiceRequest, {"resourceSpans":[...]}) is appended to
// OUT as one line. The recording script merges the lines with jq.
'use strict';
const http = require('node:http');
const fs = require('node:fs');

const out = fs.openSync(process.env.OUT, 'a');
let batches = 0;
http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') { res.end(String(batches)); return; }
  if (req.method !== 'POST' || req.url !== '/v1/traces') { res.statusCode = 404; res.end(); return; }
  if (!/json/.test(req.headers['content-type'] || '')) { res.statusCode = 415; res.end(); return; }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    try { JSON.parse(body); } catch { res.statusCode = 400; res.end(); return; }
    fs.writeSync(out, body.replace(/\n/g, ' ') + '\n');
    batches++;
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`collector on ${process.env.PORT}`));
