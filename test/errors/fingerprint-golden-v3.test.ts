import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { computeGrouping, computeGroupingV2 } from '../../src/errors/fingerprint.ts'
import { GOLDEN_INPUTS_V3, GOLDEN_PROJECT_V3 } from './golden-inputs-v3.ts'

// Pinned output of grouping algorithm v3, the current one. If one of these moves, the groups v3 opened
// split: make the change a new algorithm version instead of editing these values.
const GOLDEN_FINGERPRINTS_V3: Record<string, string> = {
  'v8 stack': '6c0e3093fc4d59d57967fa6dfe287797fc072617dcd2d45f19f72426bb352476',
  'python traceback': 'f66858d2fc65219ab97383bec729459ffeb27308cdd477498f177ac59b02e8b0',
  'jvm stack': 'bba02b54551ea6294c71e37f7b0e92650dc5fdf5dd111b89737a471a9010e99c',
  'message only': 'f942e8eee3c966111a08fb5e3d7c1e634de8fa1b6a05dc575897cbf44ac99a8a',
  'library frames only': '5a89d8bf0ff4f746136e23ecf09c0cf4107492e65a63382971ee8296e6b59d7b',
  'structured frames marked in-app': '53a6faf6e5ca74db9a2845f35a0ea09f7c759d21fb24e31bd608cc9d5c0ab356',
  'override with default': '710095cef01e3888a273c1c0d34340a23ff424b710061acd9f36719e6018b513',
  'override alone': '6efaef210b51c242800cc4f9b929ddeef5f39040b4e26a7cfe96e6a400f9e1fd',
  'node stack with aliases, async and new': '642da8624666c40b44543dc879cf4d9dd70ce5a5a5f1dd173f06a78040b60606',
  'node library frames only': '00d540c4a2761dbbbc32b9659e86dc2aee8f660a3e316dbe7abbafe4a7929228',
  'browser stack from URLs': 'd579ab8eea04e7f9776e3aff361bb8fcd50bf3c2879a5135b7150d134b7c60a7',
  'python traceback, standard library last': '0b661cf4ce1efe6f06faf3a3ef00c1e1750cec7fba94bcb7b7a3ec21f2917eb4',
  'jvm generated classes and lambdas': 'c6dba4b8820a3bca08ff897fd13082c59cc48f95c5ad95a96442edafadb0b71f',
  'structured javascript frames, names to normalise': '0097885a5eee294bafbdd303be3f8c186e935bbe3d9ec44eacae4daa5bb56cc9',
  'recursion counts once': '6077910710f4ce5287c103a68de03314f7fcdbfbbd87e0c49dc656a646374cab',
  'system frames only, structured': 'cd83b3820811ac5eb9926b808697a51866cff42e823199c185336b50dcda83a7',
  'windows paths and content hashes': '583fde27bb227a25e8ad90d699f8d3324a42f848ca849a415985fe223163dc2c',
  'chain of three': '10ba80050bccdaf8dab8d36fb8a12ee04305231beb707459adaff8f4c4be3614',
  'aggregate of one kind': 'c0a845bc0f78e164a0b5d7b30b01c5cd86c6b8536fbcb686589775f608fa017a',
  'aggregate of two kinds': '8b9a4ddcf95601fd2e32be045414304244c2de43a5d354979666fab107d8a4f0',
  'exception group with a self-parented child': 'c383ca4c5a8f2e3ee5549cefc3668323b7db1c62f88074dab05ebfdf9bb4d1ab',
  'exception group without a root': 'e44d55ed34aa063520e85ffc540610ab4118032f5db830791b501e84a32d0029',
  'synthetic type': '7f199d0745e81b7dcb8079ac760bee3af5b6a0be805b339f0e7f76b7c9e1525b',
  'message event with a template': 'bdfe0d11d6b3ca6e8e05a481d21f6984a48ae9e819afd665a77e6a0a9888a519',
  'message event without a template': 'd9b5896a8d21c286c7aa80cb6df73b2eb80b3e67687f62b136c052dab6518c33',
  'bare stack without type or message': '59f48d08933982831316ca5753b709d132bc38e471f908d9f99ea9466e4bfc81',
  'event with nothing': '2323e66d45f0256dfd58e1a3da50e5b08fdb801fe15c9920fdb84d906180f7a5',
  'empty message under a type': '35a619b77a59067382363b8fedcb9d8668011cf5c190967272ea3f7f473b4593',
  'fingerprint variables': 'a17c807d6d306c7dc0487033a4b62441a57c130bb4c753fcd3b848b2c6cf0acd',
  'exception group with an id twice': '3b398a133b4437fb1eb8d6140ac3b9fdc3bf38a160ee771b3c86490140ff96e3',
  'sdk and runtime frames only, no type or message': '2323e66d45f0256dfd58e1a3da50e5b08fdb801fe15c9920fdb84d906180f7a5',
  'error through polyfills and the task queue only': 'a33c6538e26f5350fa0c54438a1fe84603795546a36f489e831d56ad465c6f38',
  'chunk that failed to load': '5c60059114cfbaaf0c7c2198718db3739c0ac889b5e1fbf0ba12e35836d18108',
  'generated jvm names and templates': '0c269837e4ef8c2e6f24db31b60b359588b4165f89a97da6c22ff98a83bdde64',
}

describe('fingerprint algorithm v3 (golden)', () => {
  test('every golden input keeps its pinned fingerprint', () => {
    assert.deepEqual(Object.keys(GOLDEN_INPUTS_V3).sort(), Object.keys(GOLDEN_FINGERPRINTS_V3).sort())
    for (const [name, input] of Object.entries(GOLDEN_INPUTS_V3)) {
      assert.equal(computeGrouping(GOLDEN_PROJECT_V3, input).fingerprint, GOLDEN_FINGERPRINTS_V3[name], name)
    }
  })

  test('no v3 fingerprint is a v2 one: each version hashes its own name', () => {
    for (const [name, input] of Object.entries(GOLDEN_INPUTS_V3)) {
      assert.notEqual(computeGroupingV2(GOLDEN_PROJECT_V3, input).fingerprint, GOLDEN_FINGERPRINTS_V3[name], name)
    }
  })
})
