import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWorkerMessage } from './protocol.js';
import { workerRequestSchema } from './worker-requests.js';
import { ProtocolError } from './protocol-error.js';

function parsed(line: string) {
  const result = parseWorkerMessage(line, 'candidate');
  if (!result.ok) throw new Error(`expected a message, got: ${result.error.message}`);
  return result.message;
}

function rejected(line: string): ProtocolError {
  const result = parseWorkerMessage(line, 'candidate');
  if (result.ok) throw new Error(`expected a protocol error for ${line}`);
  return result.error;
}

describe('worker protocol parsing', () => {
  it('accepts every message of docs/worker-protocol.md', () => {
    const hello = parsed(
      '{"v":1,"type":"hello","role":"candidate","pid":1234,"environment":{"device":"cpu","torch":"1.13.0","cuda":null,"driver":null,"python":"3.11.2","cpu":"AMD EPYC","threads":2,"capability":null,"sm_count":null,"l2_bytes":null,"clocks":null,"triton":null,"nvcc":null}}',
    );
    assert.equal(hello.type, 'hello');
    assert.ok(hello.type === 'hello' && hello.environment.cpu === 'AMD EPYC', 'extra environment fields are kept');
    assert.equal(parsed('{"v":1,"type":"stage","stage":"build","status":"start"}').type, 'stage');
    assert.equal(parsed('{"v":1,"type":"stage","stage":"build","status":"end","duration_ms":12.3}').type, 'stage');
    const failure = parsed(
      '{"v":1,"type":"failure","stage":"build","kind":"compile_error","check":"build","message":"the extension did not build","compiler_output":"x","traceback":"y"}',
    );
    assert.ok(failure.type === 'failure' && failure.kind === 'compile_error');
    parsed('{"v":1,"type":"reference-ready","trials":[{"seed":11,"input_digest":"ab","output":"[tensor float32 (16, 1024)]"}]}');
    parsed('{"v":1,"type":"baseline","eager":{"times_ms":[1.5,1.4]},"compile":{"error":"torch 1.13 has no torch.compile"}}');
    const judgement = parsed(
      '{"v":1,"type":"judgement","passed":false,"trials":[{"seed":11,"passed":false,"check":"mismatch","message":"m","max_abs_error":0.5,"max_rel_error":0.2,"mismatch_count":40,"numel":16384,"fp64_max_abs_error":0.5,"fp64_max_rel_error":0.2,"input_mutated":false}]}',
    );
    assert.ok(judgement.type === 'judgement' && judgement.trials[0]?.mismatch_count === 40);
    parsed('{"v":1,"type":"build-info","kernels":[{"name":"k","registers":32,"shared_bytes":0,"stack_bytes":0,"local_bytes":0}],"sass":"s","ptx":"p"}');
    parsed('{"v":1,"type":"correctness-outputs","outputs":[{"seed":11,"id":"correctness-0","input_digest":"ab"}]}');
    parsed('{"v":1,"type":"timing","times_ms":[0.1,0.2],"wall_ms":[0.11,0.21],"samples":[{"id":"timed-3","call":3,"seed":22}]}');
    const handover = parsed(
      '{"v":1,"type":"handover","output":{"id":"timed-3","seed":22,"input_seed":7,"call":3,"input_digest":"ab","skeleton":"T","leaf_info":[{"type":"tensor","device":"cuda"}],"leaves":[{"tensor":{"dtype":"float32","shape":[4],"nbytes":16}}],"ipc":{"transport":"descriptor","error":null}}}',
    );
    assert.ok(handover.type === 'handover' && handover.output.id === 'timed-3');
    parsed('{"v":1,"type":"handover-ready","id":"timed-3"}');
    parsed('{"v":1,"type":"handover-received","id":"timed-3","transport":"cuda-ipc","bytes":16,"receive_ms":0.2,"ipc_error":null}');
  });

  it('refuses a hand-over with a path, or a field the protocol does not name', () => {
    assert.match(rejected('{"v":1,"type":"handover","output":{"seed":11,"path":"/etc/shadow"}}').message, /malformed `handover` message/);
    assert.match(rejected('{"v":1,"type":"handover","output":{"id":"correctness-0","seed":11,"path":"/etc/shadow"}}').message, /malformed `handover` message/);
  });

  it('turns a line that is not JSON into a protocol error quoting it', () => {
    const error = rejected('Traceback (most recent call last):');
    assert.ok(error instanceof ProtocolError);
    assert.match(error.message, /not JSON: `Traceback/);
    assert.equal(error.role, 'candidate');
  });

  it('refuses other versions, unknown types and malformed bodies with the field named', () => {
    assert.match(rejected('{"v":2,"type":"hello"}').message, /protocol version 1, got `2`/);
    assert.match(rejected('{"v":1,"type":"victory"}').message, /unknown message type `"victory"`/);
    assert.match(rejected('[1,2]').message, /not a JSON object/);
    assert.match(rejected('{"v":1,"type":"timing","times_ms":[-1],"samples":[]}').message, /malformed `timing` message at `times_ms.0`/);
    assert.match(rejected('{"v":1,"type":"stage","stage":"build","status":"end"}').message, /duration_ms/);
    assert.match(rejected('{"v":1,"type":"stage","stage":"lunch","status":"start"}').message, /at `stage`/);
    assert.match(rejected('{"v":1,"type":"failure","stage":"build","kind":"correct","check":"x","message":"y"}').message, /at `kind`/);
  });

  it('quotes at most 120 characters of a long bad line', () => {
    const error = rejected(`garbage ${'x'.repeat(10_000)}`);
    assert.ok(error.message.length < 200);
    assert.ok((error.line ?? '').length <= 121);
  });

  it('validates requests before they are sent', () => {
    assert.ok(workerRequestSchema.safeParse({ v: 1, type: 'continue' }).success);
    assert.ok(!workerRequestSchema.safeParse({ v: 1, type: 'judge', atol: -1, rtol: 0, outputs: [] }).success);
  });
});
