import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import { GENERATED_FILE, GENERATED_TYPES, REGENERATE_COMMAND, renderOtlpProto, renderOtlpProtoTypes } from '../../../bin/generate-otlp-proto.ts'

test('the OTLP decoder is compiled from the vendored opentelemetry-proto files as they are', async () => {
  assert.ok(fs.readFileSync(GENERATED_FILE, 'utf8') === (await renderOtlpProto()), `otlp-proto.generated.js is stale: run \`${REGENERATE_COMMAND}\``)
  assert.ok(fs.readFileSync(GENERATED_TYPES, 'utf8') === renderOtlpProtoTypes(), `otlp-proto.generated.d.ts is stale: run \`${REGENERATE_COMMAND}\``)
})
