import type { GroupingInputV1 as GroupingInput } from '../../src/errors/fingerprint-v1.ts'
import { parseStackTrace } from '../../src/errors/stack-trace.ts'

export const GOLDEN_PROJECT = 'prj_golden'

const v8Stack = `TypeError: Cannot read properties of undefined (reading 'id')
    at loadUser (/srv/app/releases/42/src/users.ts:42:13)
    at async handle (/srv/app/releases/42/src/routes.ts:7:3)
    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`

const pythonStack = `Traceback (most recent call last):
  File "/srv/app/users/views.py", line 42, in load_user
    user = User.objects.get(pk=user_id)
  File "/usr/lib/python3.11/site-packages/django/db/models/query.py", line 650, in get
    raise self.model.DoesNotExist(
ValueError: invalid literal for int() with base 10: 'abc'`

const javaStack = `java.lang.IllegalStateException: pool exhausted
	at com.acme.users.UserService.load(UserService.java:42)
	at com.acme.users.UserService$1.run(UserService.java:50)
	at com.acme.Main.lambda$main$0(Main.java:10)
	at java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.sql.SQLException: timeout
	at com.acme.db.Pool.get(Pool.java:1)`

/** Fixed inputs whose fingerprints the golden test pins; never edit one, add another. */
export const GOLDEN_INPUTS: Record<string, GroupingInput> = {
  'v8 stack': { name: 'TypeError', message: "Cannot read properties of undefined (reading 'id')", frames: parseStackTrace(v8Stack) },
  'python traceback': { name: 'ValueError', message: "invalid literal for int() with base 10: 'abc'", frames: parseStackTrace(pythonStack) },
  'jvm stack': { name: 'java.lang.IllegalStateException', message: 'pool exhausted', frames: parseStackTrace(javaStack) },
  'message only': {
    name: 'DbError',
    message: 'query 3f2b8c1e-9d4a-4f6b-8e2a-1c3d5e7f9a0b for bob@example.com timed out after 250ms on 10.0.0.12:5432 at 2026-11-21T20:10:00Z',
    frames: [],
  },
  'library frames only': {
    name: 'Error',
    message: 'connect ECONNREFUSED 127.0.0.1:6379',
    frames: parseStackTrace('Error: connect ECONNREFUSED\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)'),
  },
  'structured frames marked in-app': {
    name: 'KeyError',
    message: "'user'",
    frames: [
      { function: 'get_user', module: 'app.users', filename: 'users.py', lineno: 3, colno: null, inApp: true },
      { function: 'dispatch', module: 'vendored.router', filename: 'router.py', lineno: 9, colno: null, inApp: false },
    ],
  },
  'override with default': { name: 'TypeError', message: 'x', frames: parseStackTrace(v8Stack), override: ['{{ default }}', 'tenant-a'] },
  'override alone': { name: 'TypeError', message: 'x', frames: parseStackTrace(v8Stack), override: ['checkout', 'payment-declined'] },
}
