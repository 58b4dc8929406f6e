// Generated from the portal’s OpenAPI document by test/ui/api-types.test.ts (WRITE_API_TYPES=1 rewrites it). Do not edit.
export type paths = Record<string, never>;
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AlertBacktest: {
            /**
             * Format: date-time
             * @description the first window’s end
             */
            from: string;
            /**
             * Format: date-time
             * @description the last window’s end: now (the windows before it end at whole minutes)
             */
            to: string;
            /** @description the rule’s interval, or longer so that at most 288 windows are read, rounded up to whole minutes */
            stepSeconds: number;
            thresholds: {
                critical: number;
                warning: number | null;
                resolve: number | null;
            };
            /** @description at most 10: those that fired, then the largest */
            series: {
                series: string;
                points: {
                    /** Format: date-time */
                    at: string;
                    value: number | null;
                }[];
            }[];
            /** @description how many times it would have fired (notifications, repeats aside) */
            firings: number;
            transitions: {
                /** Format: date-time */
                at: string;
                series: string;
                from: string;
                to: string;
                value: number | null;
            }[];
        };
        AlertCondition: {
            /** @description the value is above (>) or below (<) a threshold */
            op: "above" | "below";
            /**
             * @description `value`: the window’s value itself; `day_before` / `week_before`: its change in % against the same window a day or a week earlier (no data when that window had 0)
             * @default value
             */
            compareTo: "value" | "day_before" | "week_before";
            /** @description the threshold that fires the alert with severity critical */
            critical: number;
            /** @description a threshold short of critical that fires it with severity warning */
            warning?: number;
            /** @description hysteresis: a firing alert resolves only once the value crosses this back (≤ it for `above`, ≥ it for `below`), not the lowest threshold */
            resolve?: number;
        };
        AlertInstance: {
            /** @description the dimension’s value; empty without `by` */
            series: string;
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            state: "ok" | "pending" | "firing" | "resolved" | "error";
            severity: ("warning" | "critical") | null;
            value: number | null;
            /**
             * Format: date-time
             * @description when the state began
             */
            since: string;
            lastNotifiedAt: string | null;
        };
        AlertNotification: {
            ruleId: string;
            ruleName: string;
            projectId: string;
            signal: string;
            aggregate: string;
            /** @description the dimension’s value; empty without `by` */
            series: string;
            by: string | null;
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            state: "ok" | "pending" | "firing" | "resolved" | "error";
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            previousState: "ok" | "pending" | "firing" | "resolved" | "error";
            severity: ("warning" | "critical") | null;
            value: number | null;
            threshold: number | null;
            /** @description above or below */
            op: string;
            /** @description value, day_before or week_before (then `value` is a change in %) */
            compareTo: string;
            unit: string;
            windowSeconds: number;
            /**
             * Format: date-time
             * @description the window’s start
             */
            windowFrom: string;
            /**
             * Format: date-time
             * @description the window’s end
             */
            windowTo: string;
            filters: {
                [key: string]: string;
            };
            /** @description one line for people: what crossed what */
            headline: string;
            /** @description the UI view of the window with the rule’s filters (PUBLIC_URL; null when it is unset) */
            link: string | null;
            /** @description what weighed most: top error groups, sample log lines, slowest spans, the endpoint’s last attempts */
            topContributors: {
                label: string;
                value?: number;
                detail?: string;
                at?: string;
            }[];
            /** @description a reminder while firing (the repeat interval), not a new transition */
            repeat: boolean;
            /** @description alert.error: why the evaluation failed */
            error: string | null;
            /** @description alh_… of the history row */
            transitionId: string;
        };
        AlertRule: {
            /** @description alr_… */
            id: string;
            projectId: string;
            /** @description unique in the project: import matches rules by it */
            name: string;
            description: string;
            /** @description a signal of `GET /api/alerts/signals` (`logs.count`, `traces.duration`, …) */
            signal: string;
            filters: {
                [key: string]: string;
            };
            aggregate: string;
            by: string | null;
            /** @description the window evaluated, 1 minute to 24 hours */
            windowSeconds: number;
            condition: components["schemas"]["AlertCondition"];
            intervalSeconds: number;
            pendingSeconds: number;
            noData: string;
            targets: {
                endpointIds: string[];
                repeatIntervalSeconds: number | null;
                sendResolved: boolean;
            };
            enabled: boolean;
            /** @description targets that no longer exist (deleted endpoints): nothing is sent to them */
            brokenTargets: string[];
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            state: "ok" | "pending" | "firing" | "resolved" | "error";
            /** @description instances firing now */
            firing: number;
            lastEvaluatedAt: string | null;
            /**
             * Format: date-time
             * @description created
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description last changed
             */
            updatedAt: string;
        };
        /** @description An alert rule as written; the export’s items and the import’s input. */
        AlertRuleDefinition: {
            /** @description unique in the project: import matches rules by it */
            name: string;
            /** @default  */
            description: string;
            /** @description a signal of `GET /api/alerts/signals` (`logs.count`, `traces.duration`, …) */
            signal: string;
            /**
             * @description the signal’s filters, by name; values as text
             * @default {}
             */
            filters: {
                [key: string]: string;
            };
            /** @description one of the signal’s aggregates; its first when absent */
            aggregate?: string;
            /**
             * @description one of the signal’s dimensions: one alert instance per series, at most 100 (past that, one `too many series` alert)
             * @default null
             */
            by: string | null;
            /** @description the window evaluated, 1 minute to 24 hours */
            windowSeconds: number;
            condition: components["schemas"]["AlertCondition"];
            /**
             * @description how often the rule is evaluated
             * @default 60
             */
            intervalSeconds: number;
            /**
             * @description fire only once the condition has held this long
             * @default 0
             */
            pendingSeconds: number;
            /**
             * @description with no value (no spans, say): treat as ok, as breaching critical, or keep the state
             * @default ok
             */
            noData: "ok" | "alerting" | "keep";
            targets?: components["schemas"]["AlertTargets"];
            /** @default true */
            enabled: boolean;
        };
        AlertRuleInput: {
            /** @description prj_… */
            projectId: string;
            /** @description unique in the project: import matches rules by it */
            name: string;
            /** @default  */
            description: string;
            /** @description a signal of `GET /api/alerts/signals` (`logs.count`, `traces.duration`, …) */
            signal: string;
            /**
             * @description the signal’s filters, by name; values as text
             * @default {}
             */
            filters: {
                [key: string]: string;
            };
            /** @description one of the signal’s aggregates; its first when absent */
            aggregate?: string;
            /**
             * @description one of the signal’s dimensions: one alert instance per series, at most 100 (past that, one `too many series` alert)
             * @default null
             */
            by: string | null;
            /** @description the window evaluated, 1 minute to 24 hours */
            windowSeconds: number;
            condition: components["schemas"]["AlertCondition"];
            /**
             * @description how often the rule is evaluated
             * @default 60
             */
            intervalSeconds: number;
            /**
             * @description fire only once the condition has held this long
             * @default 0
             */
            pendingSeconds: number;
            /**
             * @description with no value (no spans, say): treat as ok, as breaching critical, or keep the state
             * @default ok
             */
            noData: "ok" | "alerting" | "keep";
            targets?: components["schemas"]["AlertTargets"];
            /** @default true */
            enabled: boolean;
        };
        AlertRuleList: {
            /** @description this page, newest first */
            data: components["schemas"]["AlertRule"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A project’s rules as code: keep it in git, import it into any project. Targets name endpoints of the project imported into. */
        AlertRulesExport: {
            /**
             * @description the format’s version
             * @enum {number}
             */
            version: 1;
            rules: components["schemas"]["AlertRuleDefinition"][];
        };
        AlertRulesImportReport: {
            /** @description names of rules created */
            created: string[];
            /** @description names of rules whose definition changed */
            changed: string[];
            /** @description names of rules left as they were; rules of the project the file does not name are left too */
            unchanged: string[];
        };
        AlertSignal: {
            name: string;
            /** @description the module that offers it */
            module: string;
            description: string;
            unit: string;
            /** @description the first is the default */
            aggregates: string[];
            /** @description filter name → what it matches; `name.*` takes any suffix */
            filters: {
                [key: string]: string;
            };
            requiredFilters: string[];
            /** @description what `by` may name */
            dimensions: {
                [key: string]: string;
            };
            /** @description its rules are evaluated right after an event that may change it commits, not only at their interval */
            eventDriven: boolean;
        };
        AlertSilence: {
            /** @description als_… */
            id: string;
            projectId: string;
            ruleId: string | null;
            series: string | null;
            /**
             * Format: date-time
             * @description start
             */
            startsAt: string;
            /**
             * Format: date-time
             * @description end
             */
            endsAt: string;
            reason: string;
            /** @description the access token that made it (pat id) */
            createdBy: string;
            /**
             * Format: date-time
             * @description created
             */
            createdAt: string;
            /** @description now within [startsAt, endsAt) */
            active: boolean;
        };
        AlertSilenceInput: {
            projectId: string;
            /** @description one rule (alr_…); null or absent: every rule of the project */
            ruleId?: string | null;
            /** @description one value of the rule’s dimension (a service, a group); null or absent: every series */
            series?: string | null;
            /**
             * Format: date-time
             * @description default now
             */
            startsAt?: string;
            /**
             * Format: date-time
             * @description when the silence ends
             */
            endsAt: string;
            reason: string;
        };
        AlertSilenceList: {
            /** @description this page, newest first */
            data: components["schemas"]["AlertSilence"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        AlertTargets: {
            /** @default [] */
            endpointIds: string[];
            /**
             * @description while firing, notify again this often; null: once per transition
             * @default null
             */
            repeatIntervalSeconds: number | null;
            /**
             * @description also notify when the alert resolves
             * @default true
             */
            sendResolved: boolean;
        };
        AlertTransition: {
            /** @description alh_… */
            id: string;
            ruleId: string;
            ruleName: string;
            series: string;
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            from: "ok" | "pending" | "firing" | "resolved" | "error";
            /** @description ok → pending (the condition holds, for less than the pending period) → firing → resolved; error when the evaluation failed */
            to: "ok" | "pending" | "firing" | "resolved" | "error";
            severity: ("warning" | "critical") | null;
            /** @description the value evaluated (null: no data) */
            value: number | null;
            /** @description the threshold it was compared with */
            threshold: number | null;
            /**
             * Format: date-time
             * @description the window’s start
             */
            windowFrom: string;
            /**
             * Format: date-time
             * @description the window’s end
             */
            windowTo: string;
            /**
             * Format: date-time
             * @description when the transition was recorded
             */
            at: string;
            /** @description the silence that held the notification back */
            silenceId: string | null;
            /** @description the webhook message that carried the notification (msg_…, the receivers’ webhook-id); null when none was sent */
            messageId: string | null;
            /** @description the evaluation error, or why this was recorded (`repeat`, `too many series`) */
            detail: string | null;
        };
        AlertTransitionList: {
            /** @description this page, newest first */
            data: components["schemas"]["AlertTransition"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description An API key as listed: never its value or webhook secret. */
        ApiKey: {
            /** @description key_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            name: string;
            /** @description the first characters of the key, to tell keys apart */
            prefix: string;
            /** @description what the key may feed */
            scopes: ("ingest" | "otlp" | "sentry")[];
            /** Format: date-time */
            createdAt: string;
            /** @description to the minute */
            lastUsedAt: string | null;
            /** @description null while the key works */
            revokedAt: string | null;
        };
        ApiKeyList: {
            /** @description this page, newest first */
            data: components["schemas"]["ApiKey"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description One HTTP attempt of a delivery. */
        Attempt: {
            /** @description att_… */
            id: string;
            /** @description 1 for the first attempt */
            number: number;
            /** @description in_progress: recorded before the request left, no outcome yet; succeeded: 2xx; failed: any other answer; timeout: no full answer within WEBHOOK_TIMEOUT_MS; network_error: connection failed or reset; refused: the SSRF guard; interrupted: the portal instance sending it stopped (a crash) before recording an outcome — the receiver may have got it; it counts as an attempt and the next one follows once its lease runs out */
            status: "in_progress" | "succeeded" | "failed" | "timeout" | "network_error" | "refused" | "interrupted";
            /** Format: date-time */
            startedAt: string;
            /** @description until the answer or the failure; 0 while in_progress and for an interrupted attempt */
            durationMs: number;
            /** @description what was sent */
            request: {
                /** @description the endpoint URL at the time */
                url: string;
                /** @description POST */
                method: string;
                /** @description as sent, `webhook-signature` included */
                headers: {
                    [key: string]: string;
                };
                /** @description bytes sent */
                bodySize: number;
                /** @description hex SHA-256 of the body sent */
                bodySha256: string;
            };
            /** @description what came back; null when nothing did */
            response: {
                statusCode: number;
                headers: {
                    [key: string]: string;
                };
                /** @description the first 4 KiB */
                body: string;
            } | null;
            /** @description why the attempt failed without an answer */
            error: string | null;
            /** @description the newest secret version that signed it; during a rotation grace period the previous version’s signature is in the header too */
            secretId: string | null;
        };
        /** @description A stored `audit` event. */
        AuditEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "audit";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["AuditPayload"];
        };
        AuditEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["AuditEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        AuditModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /**
         * @example {
         *       "actor": "alice@example.com",
         *       "action": "project.update",
         *       "resource": "prj_01JD3Z8Q6R2N5M7K9P4TXYZABC",
         *       "statusCode": 200,
         *       "duration": 12.5
         *     }
         */
        AuditPayload: {
            /** @description who acted: a user, a token, a service */
            actor: string;
            /** @description what they did, e.g. project.created */
            action?: string;
            /** @description what they did it to */
            resource?: string;
            /** @description HTTP method */
            method?: string;
            /** @description request path */
            path?: string;
            /** @description HTTP status code */
            statusCode?: number;
            /** @description milliseconds */
            duration?: number;
            ip?: string;
            userAgent?: string;
            metadata?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * @description A consistent copy of the embedded database, written by the running portal into its data folder.
         * @example {
         *       "id": "bak_01jd3z8q6r2n5m7k9p4txyzabc",
         *       "folder": "/var/lib/portal/data/backups/bak_01jd3z8q6r2n5m7k9p4txyzabc",
         *       "files": [
         *         {
         *           "name": "portal.db",
         *           "bytes": 4096000
         *         },
         *         {
         *           "name": "events.duckdb",
         *           "bytes": 44040192
         *         },
         *         {
         *           "name": "secret.key",
         *           "bytes": 64
         *         }
         *       ],
         *       "createdAt": "2026-11-27T03:00:00.000Z",
         *       "durationMs": 840
         *     }
         */
        Backup: {
            /** @description bak_…, also the name of its folder */
            id: string;
            /** @description where the portal wrote it, on the portal’s host: `<PORTAL_DATA_DIR>/backups/<id>` */
            folder: string;
            /** @description what it holds; the folder is a data folder a portal starts on as it is */
            files: {
                name: string;
                bytes: number;
            }[];
            /**
             * Format: date-time
             * @description when the copy began: it holds every event acknowledged before then
             */
            createdAt: string;
            durationMs: number;
        };
        /** @description Something that happened before the error: a log line, a request, a click. */
        Breadcrumb: {
            /**
             * Format: date-time
             * @description when it happened
             */
            timestamp?: string;
            /** @description default, http, navigation, query, error, debug, … */
            type?: string;
            /** @description what recorded it: console, fetch, ui.click, … */
            category?: string;
            /** @description fatal, error, warning, info or debug */
            level?: string;
            message?: string;
            /** @description what the category records: url, method, status_code, … */
            data?: {
                [key: string]: unknown;
            };
        };
        /** @description Fields not listed here are kept in the occurrence’s `metadata`. */
        CaptureRequest: {
            /** @description exception name, e.g. TypeError */
            name: string;
            message: string;
            /** @description a stack trace as printed by V8/Node, CPython or the JVM (also SpiderMonkey/JavaScriptCore) */
            stack?: string;
            /** @description structured frames, innermost (the one that threw) first; when not empty, used instead of `stack` for grouping */
            frames?: {
                function?: string;
                /** @description module or class; used for grouping before the file name */
                module?: string;
                /** @description path or URL; only its base name counts for grouping */
                filename?: string;
                /** @description the absolute path or URL beside a shorter `filename` (Sentry’s `abs_path`): a file served from a URL does not count for grouping, its function does */
                absPath?: string;
                lineno?: number;
                colno?: number;
                /** @description marks the frame as your code or a library, overriding the rules */
                inApp?: boolean;
            }[];
            /** @description the release that raised it */
            release?: string;
            /** @description e.g. production */
            environment?: string;
            /** @description the service that raised it */
            service?: string;
            /** @description request context (method, url, headers, …); Authorization, Cookie and API-key headers are stored as [filtered] */
            request?: {
                [key: string]: unknown;
            };
            /**
             * Format: date-time
             * @description when it happened; default and upper bound: the time it is received
             */
            timestamp?: string;
            /** @description overrides grouping: occurrences with the same array share a group; `{{ default }}` stands for the computed fingerprint */
            fingerprint?: string[];
            /** @description what happened before it, oldest first; the newest 100 are kept */
            breadcrumbs?: components["schemas"]["Breadcrumb"][];
            /** @description counted per group as facets (keys up to 32 characters, text values up to 200); kept in `metadata.tags` */
            tags?: {
                [key: string]: unknown;
            };
            /** @description who it affected: `id`, `email` or `ip_address` counts towards the group’s users affected; kept in `metadata.user` */
            user?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description The occurrence recorded and the group it joined. */
        CaptureResponse: {
            /** @description the occurrence id (occ_…) */
            id: string;
            /**
             * @description hex SHA-256 fingerprint computed for this occurrence
             * @example 3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718
             */
            fingerprint: string;
            /**
             * @description the fingerprint its group is known by (differs after a merge)
             * @example 3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718
             */
            groupFingerprint: string;
            /** @description true when this occurrence opened its group */
            isNewGroup: boolean;
        };
        /** @description A change that may explain what a chart shows: a deploy, a configuration change, a flag change, an alert firing or resolved. */
        Change: {
            /** @description what sort of change: deploy, config, flag, or alert (an alert rule began or stopped firing) */
            kind: string;
            /** @description the event type it was recorded as: its module’s events read holds it (`alert`: the rule’s transitions hold it) */
            eventType: string;
            /** @description the event that recorded it (an alert transition’s id) */
            eventId: string;
            /** Format: date-time */
            ts: string;
            /** @description one line that says what changed */
            title: string;
            /** @description what changed, as its page finds it: a release, a configuration path, a flag key, an alert rule’s id */
            subject: string;
            service: string | null;
            environment: string | null;
            actor: string | null;
            commit: string | null;
        };
        ChangeList: {
            /** @description newest first */
            data: components["schemas"]["Change"][];
            /** @description more changes fell in the window than `limit`: the oldest were left out; narrow the window */
            truncated: boolean;
        };
        /** @description A stored `config` event. */
        ConfigEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "config";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["ConfigPayload"];
        };
        ConfigEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["ConfigEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        ConfigPath: {
            path: string;
            /** @description changes in the window (by `actor` when given) */
            changes: number;
            /** Format: date-time */
            firstChangedAt: string;
            /** Format: date-time */
            lastChangedAt: string;
            lastActor: string | null;
            lastDiff: string | null;
            /** @description the latest change */
            eventId: string;
        };
        ConfigPathList: {
            /** @description this page, newest first */
            data: components["schemas"]["ConfigPath"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @example {
         *       "path": "config/app.yaml",
         *       "diff": "--- a\n+++ b\n-timeout: 5\n+timeout: 10",
         *       "actor": "bob"
         *     }
         */
        ConfigPayload: {
            /** @description the configuration file’s path */
            path: string;
            /** @description unified diff of the change */
            diff?: string;
            /** @description who changed it */
            actor?: string;
        } & {
            [key: string]: unknown;
        };
        ConfigsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /** @description A stored `cost` event. */
        CostEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "cost";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["CostPayload"];
        };
        CostEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["CostEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @example {
         *       "provider": "aws",
         *       "service": "ec2",
         *       "amount": 12.34,
         *       "currency": "USD",
         *       "period": "2026-10"
         *     }
         */
        CostPayload: {
            /** @description aws, gcp, azure — or your own */
            provider?: string;
            service?: string;
            region?: string;
            /** @description decimal amount in `currency` */
            amount: number;
            /** @description ISO 4217 code */
            currency: string;
            /** @description YYYY-MM */
            period?: string;
        } & {
            [key: string]: unknown;
        };
        CostPeriodTotal: {
            /** @description YYYY-MM: the event’s `period`, else the UTC month of its time */
            period: string;
            currency: string;
            group: string | null;
            /** @description sum of `amount`, rounded to 6 decimal places */
            total: number;
            events: number;
            previousTotal: number | null;
            change: number | null;
            changePercent: number | null;
        };
        CostsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        CostTotals: {
            /** @description what a row totals besides month and currency */
            groupBy: "service" | "provider" | "region" | "none";
            /** @description newest period first, then currency, then largest total */
            data: components["schemas"]["CostPeriodTotal"][];
            /** @description the whole window’s total per currency; amounts in different currencies are never added together */
            currencies: {
                currency: string;
                total: number;
                events: number;
            }[];
        };
        /**
         * @description A new API key with its value and webhook secret, which no later response shows again.
         * @example {
         *       "id": "key_01JD3Z8Q6R2N5M7K9P4TXYZABC",
         *       "projectId": "prj_01JD3Z8Q6R2N5M7K9P4TXYZABC",
         *       "name": "checkout backend",
         *       "key": "pk_3q8Vd0…",
         *       "webhookSecret": "whsec_Zr5t…",
         *       "prefix": "pk_3q8Vd0",
         *       "scopes": [
         *         "ingest"
         *       ],
         *       "createdAt": "2026-11-23T18:30:00.000Z"
         *     }
         */
        CreatedApiKey: {
            /** @description key_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            name: string;
            /** @description pk_… — the bearer for ingest; shown in this response only */
            key: string;
            /** @description whsec_… — the HMAC key for X-Service-Signature; shown in this response only */
            webhookSecret: string;
            /** @description the first characters of the key, to tell keys apart */
            prefix: string;
            /** @description what the key may feed */
            scopes: ("ingest" | "otlp" | "sentry")[];
            /** @description present when the key has the `sentry` scope: the DSN to give Sentry SDKs (it holds the key; shown in this response only) */
            sentryDsn?: string;
            /** @description present when the key has the `otlp` scope: the value for `OTEL_EXPORTER_OTLP_ENDPOINT` (PUBLIC_URL, else the scheme and host the request came to) */
            otlpEndpoint?: string;
            /** Format: date-time */
            createdAt: string;
        };
        /** @description The endpoint, with its signing secret shown this once. */
        CreatedEndpoint: {
            /** @description whe_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            /**
             * @description where messages are POSTed
             * @example https://hooks.example.com/portal
             */
            url: string;
            /** @description generic: the Standard Webhooks body `{ id, type, timestamp, data }`; slack: `{ text, blocks }` for a Slack incoming webhook; discord: `{ content, embeds }` for a Discord webhook. Every kind is signed the same way. */
            kind: "generic" | "slack" | "discord";
            /** @description for people; not sent */
            description: string;
            /** @description the event types it takes; empty: every type */
            eventTypes: string[];
            /** @description false: nothing is delivered to it */
            enabled: boolean;
            /** @description gone: it answered 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS; manual: PATCH enabled=false */
            disabledReason: "gone" | "failing" | "manual" | null;
            disabledAt: string | null;
            /** @description start of the current run of failed attempts; null after a success */
            failingSince: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description whsec_… (Standard Webhooks form); shown in this response only */
            secret: string;
            /** @description whs_…: the secret version; attempts name the version that signed them */
            secretId: string;
        };
        /** @description One message’s delivery to one endpoint. */
        Delivery: {
            /** @description dlv_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            /** @description whe_… */
            endpointId: string;
            /** @description msg_…; sent as `webhook-id`, the same on every attempt */
            messageId: string;
            /** @description the message’s event type */
            eventType: string;
            /** @description pending until an attempt succeeds (succeeded) or the last attempt fails, a 410 arrives or the endpoint is disabled (failed) */
            status: "pending" | "succeeded" | "failed";
            /** @description attempts made so far */
            attemptCount: number;
            /** @description the endpoint’s URL now (a deleted endpoint’s last URL) */
            endpointUrl: string;
            /** @description the HTTP status of the latest attempt; null before the first answer or when nothing answered */
            lastStatusCode: number | null;
            /** @description when the next attempt is due; null once the delivery has ended */
            nextAttemptAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** @description A delivery with its payload and every attempt. */
        DeliveryDetail: {
            /** @description dlv_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            /** @description whe_… */
            endpointId: string;
            /** @description msg_…; sent as `webhook-id`, the same on every attempt */
            messageId: string;
            /** @description the message’s event type */
            eventType: string;
            /** @description pending until an attempt succeeds (succeeded) or the last attempt fails, a 410 arrives or the endpoint is disabled (failed) */
            status: "pending" | "succeeded" | "failed";
            /** @description attempts made so far */
            attemptCount: number;
            /** @description the endpoint’s URL now (a deleted endpoint’s last URL) */
            endpointUrl: string;
            /** @description the HTTP status of the latest attempt; null before the first answer or when nothing answered */
            lastStatusCode: number | null;
            /** @description when the next attempt is due; null once the delivery has ended */
            nextAttemptAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description the message payload (`data` of a generic body) */
            payload: {
                [key: string]: unknown;
            };
            /** @description every attempt, oldest first */
            attempts: components["schemas"]["Attempt"][];
        };
        DeliveryList: {
            /** @description this page, newest first */
            data: components["schemas"]["Delivery"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A stored `deploy` event. */
        DeployEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "deploy";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["DeployPayload"];
        };
        DeployEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["DeployEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description The deploy event’s payload, with its id and time. */
        DeployFailedNotification: {
            /** @description evt_… of the deploy event */
            eventId: string;
            /**
             * Format: date-time
             * @description when the deploy happened
             */
            ts: string;
            service: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * @example {
         *       "service": "checkout-api",
         *       "version": "1.2.3",
         *       "environment": "production",
         *       "status": "succeeded"
         *     }
         */
        DeployPayload: {
            service: string;
            version?: string;
            /** @description production, staging, … */
            environment?: string;
            /** @description started, succeeded, failed, rolled_back — or your own */
            status?: string;
            /** @description commit SHA */
            commit?: string;
        } & {
            [key: string]: unknown;
        };
        DeploysModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /** @description A webhook endpoint (never its secret). */
        Endpoint: {
            /** @description whe_… */
            id: string;
            /** @description prj_… */
            projectId: string;
            /**
             * @description where messages are POSTed
             * @example https://hooks.example.com/portal
             */
            url: string;
            /** @description generic: the Standard Webhooks body `{ id, type, timestamp, data }`; slack: `{ text, blocks }` for a Slack incoming webhook; discord: `{ content, embeds }` for a Discord webhook. Every kind is signed the same way. */
            kind: "generic" | "slack" | "discord";
            /** @description for people; not sent */
            description: string;
            /** @description the event types it takes; empty: every type */
            eventTypes: string[];
            /** @description false: nothing is delivered to it */
            enabled: boolean;
            /** @description gone: it answered 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS; manual: PATCH enabled=false */
            disabledReason: "gone" | "failing" | "manual" | null;
            disabledAt: string | null;
            /** @description start of the current run of failed attempts; null after a success */
            failingSince: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        EndpointDisabledNotification: {
            /** @description whe_… */
            endpointId: string;
            /** Format: uri */
            url: string;
            reason: "gone" | "failing";
            detail: string;
            /**
             * Format: date-time
             * @description when it was disabled
             */
            disabledAt: string;
        };
        /** @description How an endpoint’s recent attempts went; `failingSince` on the endpoint says how long it has been failing. */
        EndpointHealth: {
            /** @description whe_… */
            endpointId: string;
            /** @description finished attempts in the window (in_progress ones are left out) */
            attempts: number;
            /** @description attempts answered with a 2xx */
            succeeded: number;
            /** @description succeeded / attempts, 0–1, 4 decimal places */
            successRate: number;
            /** Format: date-time */
            lastAttemptAt: string;
            /** @description in_progress: recorded before the request left, no outcome yet; succeeded: 2xx; failed: any other answer; timeout: no full answer within WEBHOOK_TIMEOUT_MS; network_error: connection failed or reset; refused: the SSRF guard; interrupted: the portal instance sending it stopped (a crash) before recording an outcome — the receiver may have got it; it counts as an attempt and the next one follows once its lease runs out */
            lastAttemptStatus: "in_progress" | "succeeded" | "failed" | "timeout" | "network_error" | "refused" | "interrupted";
            /** @description the HTTP status of the latest attempt; null when nothing answered */
            lastStatusCode: number | null;
        };
        EndpointList: {
            /** @description this page, newest first */
            data: components["schemas"]["Endpoint"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A delivery just enqueued. */
        EnqueuedDelivery: {
            /** @description dlv_… */
            id: string;
            /** @description whe_… */
            endpointId: string;
            /** @description pending until an attempt succeeds (succeeded) or the last attempt fails, a 410 arrives or the endpoint is disabled (failed) */
            status: "pending" | "succeeded" | "failed";
        };
        /** @description A stored `error` event. */
        ErrorEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "error";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["ErrorPayload"];
        };
        ErrorEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["ErrorEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description Occurrences that share a fingerprint: one problem to triage. */
        ErrorGroup: {
            /**
             * @description the fingerprint the group is known by; any fingerprint in `fingerprints` finds it too
             * @example 3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718
             */
            fingerprint: string;
            /** @description prj_… */
            projectId: string;
            /** @description exception name of the latest occurrence */
            name: string;
            /** @description message of the latest occurrence */
            message: string;
            /** @description triage state; an occurrence reopens a resolved group */
            status: "unresolved" | "resolved" | "ignored";
            /** @description reopened by an occurrence after it was resolved; cleared by the next triage */
            regressed: boolean;
            /** @description ignored until a count, a number of users or a time, and returned to unresolved when it was reached (as Sentry’s escalating); cleared by the next triage */
            unignored: boolean;
            statusDetails: components["schemas"]["ErrorGroupStatusDetails"];
            assignee: string | null;
            /** @description the grouping algorithm version that opened it (v1 for groups older than v2); occurrences of later versions still find it, see docs/errors.md */
            groupingAlgorithm: string;
            /** Format: date-time */
            firstSeen: string;
            /** Format: date-time */
            lastSeen: string;
            /** @description every occurrence ever, exact (only the latest 100 are kept) */
            count: number;
            /** @description every environment an occurrence named */
            environments: string[];
            /** @description in the order they were first seen */
            releases: string[];
            /** @description every service an occurrence named */
            services: string[];
            firstRelease: string | null;
            lastRelease: string | null;
            /** @description every fingerprint merged into the group, the oldest first */
            fingerprints: string[];
            /** @description occurrences per UTC day over the last 14 days, oldest first, today included */
            countsPerDay: {
                /** Format: date */
                date: string;
                count: number;
            }[];
            /** @description distinct users its occurrences named (`user.id`, else `user.email`, else `user.ip_address`), exact */
            usersAffected: number;
        };
        ErrorGroupAssignment: {
            /** @description a person: an access token’s name or an OIDC subject; null when nobody is assigned */
            assignee: string | null;
            /** @description the name of who assigned it */
            assignedBy: string | null;
            assignedAt: string | null;
            /** @description people of the organisation to choose from: the names of its live access tokens and the assignees so far */
            people: string[];
        };
        /** @description A group with why its occurrences share it and its most recent occurrences. */
        ErrorGroupDetail: {
            /**
             * @description the fingerprint the group is known by; any fingerprint in `fingerprints` finds it too
             * @example 3b9f1c2e7a4d5f6081b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718
             */
            fingerprint: string;
            /** @description prj_… */
            projectId: string;
            /** @description exception name of the latest occurrence */
            name: string;
            /** @description message of the latest occurrence */
            message: string;
            /** @description triage state; an occurrence reopens a resolved group */
            status: "unresolved" | "resolved" | "ignored";
            /** @description reopened by an occurrence after it was resolved; cleared by the next triage */
            regressed: boolean;
            /** @description ignored until a count, a number of users or a time, and returned to unresolved when it was reached (as Sentry’s escalating); cleared by the next triage */
            unignored: boolean;
            statusDetails: components["schemas"]["ErrorGroupStatusDetails"];
            assignee: string | null;
            /** @description the grouping algorithm version that opened it (v1 for groups older than v2); occurrences of later versions still find it, see docs/errors.md */
            groupingAlgorithm: string;
            /** Format: date-time */
            firstSeen: string;
            /** Format: date-time */
            lastSeen: string;
            /** @description every occurrence ever, exact (only the latest 100 are kept) */
            count: number;
            /** @description every environment an occurrence named */
            environments: string[];
            /** @description in the order they were first seen */
            releases: string[];
            /** @description every service an occurrence named */
            services: string[];
            firstRelease: string | null;
            lastRelease: string | null;
            /** @description every fingerprint merged into the group, the oldest first */
            fingerprints: string[];
            /** @description occurrences per UTC day over the last 14 days, oldest first, today included */
            countsPerDay: {
                /** Format: date */
                date: string;
                count: number;
            }[];
            /** @description distinct users its occurrences named (`user.id`, else `user.email`, else `user.ip_address`), exact */
            usersAffected: number;
            /** @description why occurrences share this group: the components hashed into each of its fingerprints */
            grouping: {
                fingerprint: string;
                /** @description the grouping algorithm version that computed it */
                algorithm: string;
                components: {
                    /** @description exception (a type), stacktrace, value (an exception’s message), message (an event without exception) or custom (the client’s fingerprint) */
                    id: string;
                    /** @description whether its values went into the hash */
                    contributes: boolean;
                    values: string[];
                    /** @description why it counts or not */
                    hint: string;
                }[];
                count: number;
                /** Format: date-time */
                firstSeen: string;
                /** Format: date-time */
                lastSeen: string;
            }[];
            /** @description the most recent, newest first (at most 20) */
            occurrences: components["schemas"]["ErrorOccurrence"][];
            /** @description occurrences per release, environment and service, most frequent first; occurrences that named none are not counted */
            breakdown: {
                release: {
                    value: string;
                    /** @description occurrences that named it, exact */
                    count: number;
                    /** Format: date-time */
                    firstSeen: string;
                    /** Format: date-time */
                    lastSeen: string;
                }[];
                environment: {
                    value: string;
                    /** @description occurrences that named it, exact */
                    count: number;
                    /** Format: date-time */
                    firstSeen: string;
                    /** Format: date-time */
                    lastSeen: string;
                }[];
                service: {
                    value: string;
                    /** @description occurrences that named it, exact */
                    count: number;
                    /** Format: date-time */
                    firstSeen: string;
                    /** Format: date-time */
                    lastSeen: string;
                }[];
            };
        };
        ErrorGroupList: {
            /** @description this page, newest first */
            data: components["schemas"]["ErrorGroup"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        ErrorGroupNotification: {
            /** @description the group’s primary fingerprint */
            fingerprint: string;
            name: string;
            message: string;
            /** @description unresolved after a regression or when an ignore condition was reached */
            status: string;
            /** @description occurrences so far */
            count: number;
            /**
             * Format: date-time
             * @description first occurrence
             */
            firstSeen: string;
            /**
             * Format: date-time
             * @description latest occurrence
             */
            lastSeen: string;
        };
        ErrorGroupStatus: "unresolved" | "resolved" | "ignored";
        /** @description The conditions set with the status, as Sentry’s statusDetails; all null or false for a plain status. */
        ErrorGroupStatusDetails: {
            /** @description resolved in the next release: occurrences of releases the project’s errors had named when it was resolved, or of none, leave it resolved; any other release reopens it */
            inNextRelease: boolean;
            inRelease: string | null;
            latestRelease: string | null;
            ignoreUntil: string | null;
            ignoreUntilCount: number | null;
            ignoreUntilUserCount: number | null;
        };
        /** @description Tags as facets: the distribution of each tag key over a group’s occurrences. */
        ErrorGroupTags: {
            /** @description every tag key the group’s occurrences named, the most named first */
            data: {
                /** @description environment, release, service, user (`id:…`, `email:…`, `ip:…`), or a tag’s own name (`tags.NAME` when that is one of these) */
                key: string;
                /** @description how many values the key has in the group */
                distinctValues: number;
                /** @description occurrences that named the key */
                count: number;
                /** @description the most frequent values, most frequent first */
                topValues: {
                    value: string;
                    /** @description occurrences that named it, exact */
                    count: number;
                    /** Format: date-time */
                    firstSeen: string;
                    /** Format: date-time */
                    lastSeen: string;
                }[];
            }[];
        };
        ErrorGroupTriage: {
            /** @description triage state; an occurrence reopens a resolved group */
            status: "unresolved" | "resolved" | "ignored";
            /** @description conditions of the status, named as Sentry’s; 400 when one does not fit the status or another */
            statusDetails?: {
                /**
                 * @description with resolved: stays resolved for the releases named so far
                 * @enum {boolean}
                 */
                inNextRelease?: true;
                /** @description with resolved: fixed in this release */
                inRelease?: string;
                /** @description with ignored: until this many more occurrences */
                ignoreCount?: number;
                /** @description with ignored: until this many more users affected */
                ignoreUserCount?: number;
                /**
                 * Format: date-time
                 * @description with ignored: until this time, in the future
                 */
                ignoreUntil?: string;
                /** @description with ignored: for this many minutes (at most a year); not with ignoreUntil */
                ignoreDuration?: number;
            };
        };
        /** @description One captured exception. */
        ErrorOccurrence: {
            /** @description occ_…, or the evt_… of an ingested error event */
            id: string;
            /** @description the fingerprint computed for it */
            fingerprint: string;
            /** Format: date-time */
            timestamp: string;
            /** Format: date-time */
            receivedAt: string;
            name: string;
            message: string;
            stack: string | null;
            frames: components["schemas"]["StackFrame"][] | null;
            release: string | null;
            environment: string | null;
            service: string | null;
            request: {
                [key: string]: unknown;
            } | null;
            /** @description the capture’s fields beyond the known ones */
            metadata: {
                [key: string]: unknown;
            };
            traceId: string | null;
            spanId: string | null;
            /** @description what happened before it, oldest first (the newest 100 sent) */
            breadcrumbs: components["schemas"]["Breadcrumb"][];
            /** @description the receivers that reported it (`sentry`, `opentelemetry`): both when one exception reported twice for its span was stored once */
            reportedBy: string[];
        };
        ErrorOccurrenceHistogram: {
            data: {
                /** Format: date-time */
                start: string;
                count: number;
            }[];
            total: number;
        };
        ErrorOccurrenceList: {
            /** @description this page, newest first */
            data: components["schemas"]["ErrorOccurrence"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @description At least one of name and message is required.
         * @example {
         *       "name": "TypeError",
         *       "message": "cart is undefined",
         *       "environment": "production",
         *       "release": "1.2.3"
         *     }
         */
        ErrorPayload: {
            /** @description exception name, e.g. TypeError */
            name?: string;
            message?: string;
            release?: string;
            environment?: string;
            /** @description the service that raised it */
            service?: string;
            /** @description a printed stack trace (V8, CPython, JVM, …), parsed for grouping */
            stack?: string;
            /** @description structured frames, innermost first; used instead of `stack` for grouping */
            frames?: {
                function?: string;
                /** @description module or class; used for grouping before the file name */
                module?: string;
                /** @description path or URL; only its base name counts for grouping */
                filename?: string;
                /** @description the absolute path or URL beside a shorter `filename` (Sentry’s `abs_path`): a file served from a URL does not count for grouping, its function does */
                absPath?: string;
                lineno?: number;
                colno?: number;
                /** @description marks the frame as your code or a library, overriding the rules */
                inApp?: boolean;
            }[];
            /** @description request context; Authorization, Cookie and API-key headers are stored as [filtered] */
            request?: {
                [key: string]: unknown;
            };
            /** @description overrides grouping, as a capture’s and Sentry’s `fingerprint`: occurrences with the same array share a group; `{{ default }}` stands for the computed fingerprint */
            fingerprint?: string[];
            /** @description what happened before it, oldest first; the newest 100 are kept */
            breadcrumbs?: components["schemas"]["Breadcrumb"][];
            /** @description tags (text, number or boolean values), counted per group as facets */
            tags?: {
                [key: string]: unknown;
            };
            /** @description who it affected: `id`, `email` or `ip_address` counts towards the group’s users affected */
            user?: {
                [key: string]: unknown;
            };
            /** @description set by the Sentry (`sentry`) and OTLP (`opentelemetry`) receivers: one exception both report for the same trace and span is stored once */
            reportedBy?: string;
        } & {
            [key: string]: unknown;
        };
        ErrorsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
            /** @description the fingerprint algorithm version new occurrences are grouped with */
            groupingAlgorithm: string;
            occurrencesKeptPerGroup: number;
            /** @description error groups of project_id */
            groups?: number;
            /** @description of which unresolved */
            unresolvedGroups?: number;
        };
        /** @description The columnar event store (DuckDB on the embedded default) and the outbox that feeds it: failing while events cannot be applied to it or read from it. */
        EventStoreHealthCheck: {
            status: "ok" | "failing";
            /** @description how long the check took (it reads the event store’s state in memory) */
            latencyMs: number;
            /** @description why events cannot be applied or read: `no space left on device`, a database DuckDB invalidated and the portal is reopening, the outbox of the last run still being applied */
            error?: string;
            outbox: {
                /** @description acknowledged events in the outbox, not yet applied to the event store (counted every 250 ms) */
                events: number;
                /** @description the outbox rows (one per module per ingest commit) holding them */
                batches: number;
                /** @description EVENT_OUTBOX_MAX_EVENTS: past it ingest answers 503 until the outbox drains; 0, no bound */
                maxEvents: number;
            };
            /**
             * Format: date-time
             * @description when events stopped being applied
             */
            unavailableSince?: string;
        };
        /** @description A stored `feature_flag` event. */
        FeatureFlagEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "feature_flag";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["FeatureFlagPayload"];
        };
        FeatureFlagEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["FeatureFlagEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @example {
         *       "key": "new-checkout",
         *       "enabled": true,
         *       "rollout": 25,
         *       "actor": "carol"
         *     }
         */
        FeatureFlagPayload: {
            /** @description the flag’s key */
            key: string;
            enabled?: boolean;
            /** @description percent of traffic, 0–100 */
            rollout?: number;
            /** @description who changed it */
            actor?: string;
        } & {
            [key: string]: unknown;
        };
        FlagChange: {
            eventId: string;
            /** Format: date-time */
            changedAt: string;
            enabled: boolean | null;
            rollout: number | null;
            actor: string | null;
        };
        FlagChangeList: {
            /** @description this page, newest first */
            data: components["schemas"]["FlagChange"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        FlagsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        FlagState: {
            key: string;
            enabled: boolean | null;
            rollout: number | null;
            actor: string | null;
            /**
             * Format: date-time
             * @description time of the latest event
             */
            updatedAt: string;
            /** @description events recorded for this flag */
            changes: number;
            /** @description the latest event */
            eventId: string;
        };
        FlagStateDetail: {
            key: string;
            enabled: boolean | null;
            rollout: number | null;
            actor: string | null;
            /**
             * Format: date-time
             * @description time of the latest event
             */
            updatedAt: string;
            /** @description events recorded for this flag */
            changes: number;
            /** @description the latest event */
            eventId: string;
            history: components["schemas"]["FlagChangeList"];
        };
        FlagStateList: {
            /** @description this page, newest first */
            data: components["schemas"]["FlagState"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @description The portal’s health and each check’s result.
         * @example {
         *       "status": "ok",
         *       "checks": {
         *         "database": {
         *           "status": "ok",
         *           "latencyMs": 1.2
         *         },
         *         "authorization": {
         *           "status": "ok",
         *           "latencyMs": 0.4
         *         },
         *         "eventStore": {
         *           "status": "ok",
         *           "latencyMs": 0,
         *           "outbox": {
         *             "events": 1200,
         *             "batches": 3,
         *             "maxEvents": 1000000
         *           }
         *         }
         *       }
         *     }
         */
        Health: {
            status: "ok" | "unavailable";
            /** @description one entry per dependency; `eventStore` where events live in a store of their own (DuckDB on the embedded default; on PostgreSQL they are the database’s), `identityProvider` when AUTH_JWKS_URL is set */
            checks: {
                database: components["schemas"]["HealthCheck"];
                authorization: components["schemas"]["HealthCheck"];
                eventStore?: components["schemas"]["EventStoreHealthCheck"];
                identityProvider?: components["schemas"]["HealthCheck"];
            };
        };
        /** @description One dependency’s check. */
        HealthCheck: {
            status: "ok" | "failing";
            /** @description how long the check took */
            latencyMs: number;
            /** @description why the check failed; never a secret or a connection string */
            error?: string;
        };
        /** @description Who the bearer of an access token is. */
        Identity: {
            /** @description the access token’s id (`oidc:<subject>` for an OIDC bearer) */
            tokenId: string;
            /** @description the organisation the token acts in */
            orgId: string;
            /** @description admin: everything; viewer: reads only */
            role: "admin" | "viewer";
            /** @description the token’s name, or the OIDC subject */
            name: string;
        };
        /** @description One event. An event whose `type`, `ts` or `data` is wrong (per the payload component of its type) is listed in `rejected`; the others are stored. */
        IngestEvent: {
            /**
             * @description the event type, one of `audit`, `config`, `cost`, `deploy`, `error`, `feature_flag`, `log`, `performance`, `repository`, `session`, `tenant`, `trace`, `video`, `webhook`; it selects the module and the shape of `data`
             * @example log
             */
            type: string;
            /**
             * @description when it happened: ISO 8601 in UTC (`2026-11-23T18:30:00.000Z`)
             * @example 2026-11-23T18:30:00.000Z
             */
            ts: string;
            /**
             * @description the payload: `audit` → `AuditPayload`, `config` → `ConfigPayload`, `cost` → `CostPayload`, `deploy` → `DeployPayload`, `error` → `ErrorPayload`, `feature_flag` → `FeatureFlagPayload`, `log` → `LogPayload`, `performance` → `PerformancePayload`, `repository` → `RepositoryPayload`, `session` → `SessionPayload`, `tenant` → `TenantPayload`, `trace` → `TracePayload`, `video` → `VideoPayload`, `webhook` → `WebhookPayload`
             * @example {
             *       "level": "error",
             *       "message": "payment declined for order 1042"
             *     }
             */
            data: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description A batch of events. Not an object with an `events` array: 400 `missing_events`. */
        IngestRequest: {
            /** @description the batch; each event is checked on its own */
            events: components["schemas"]["IngestEvent"][];
        };
        /**
         * @description What happened to each event of the batch.
         * @example {
         *       "accepted": 2,
         *       "rejected": [
         *         {
         *           "index": 1,
         *           "reason": "data.actor: required"
         *         }
         *       ]
         *     }
         */
        IngestResponse: {
            /** @description events stored; they are committed before this answer */
            accepted: number;
            /** @description the events not stored, in batch order */
            rejected: components["schemas"]["RejectedEvent"][];
        };
        LatestDeploy: {
            service: string;
            environment: string | null;
            version: string | null;
            status: string | null;
            commit: string | null;
            /** @description the latest deploy's status is one of failed, failure, error, errored, rolled_back, rollback (any case) */
            failed: boolean;
            /**
             * Format: date-time
             * @description time of the latest deploy
             */
            deployedAt: string;
            /** @description deploys of this service to this environment */
            deploys: number;
            /** @description the latest deploy event */
            eventId: string;
        };
        LatestDeployList: {
            /** @description this page, newest first */
            data: components["schemas"]["LatestDeploy"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A stored `log` event. */
        LogEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "log";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["LogPayload"];
        };
        LogEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["LogEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        LogLevelCounts: {
            data: {
                level: string | null;
                count: number;
            }[];
            /** @description logs in the window */
            total: number;
        };
        LogLevelHistogram: {
            /** @description every bucket of the window, oldest first (empty ones with total 0) */
            data: {
                /**
                 * Format: date-time
                 * @description the bucket’s first instant
                 */
                start: string;
                total: number;
                /** @description levels with logs in the bucket */
                levels: {
                    level: string | null;
                    count: number;
                }[];
            }[];
            /** @description logs in the window */
            total: number;
        };
        /**
         * @example {
         *       "level": "error",
         *       "message": "payment declined for order 1042",
         *       "module": "billing",
         *       "fields": {
         *         "requestId": "req_7f3a"
         *       }
         *     }
         */
        LogPayload: {
            /** @description trace, debug, info, warn, error, fatal — or your own */
            level?: string;
            message: string;
            /** @description the logger or component that wrote it */
            module?: string;
            /** @description key/value context */
            fields?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        LogsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /** @description A stored `performance` event. */
        PerformanceEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "performance";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["PerformancePayload"];
        };
        PerformanceEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["PerformanceEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        PerformanceModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /**
         * @example {
         *       "service": "checkout-api",
         *       "metric": "latency",
         *       "value": 182.5,
         *       "unit": "ms"
         *     }
         */
        PerformancePayload: {
            service?: string;
            /** @description e.g. http.server.duration */
            metric: string;
            value: number;
            /** @description ms, s, bytes, percent — or your own */
            unit?: string;
        } & {
            [key: string]: unknown;
        };
        PerformanceSeries: {
            metric: string;
            service: string | null;
            /** @description the bucket width used */
            bucket: string;
            /** Format: date-time */
            from: string;
            /** Format: date-time */
            to: string;
            /** @description oldest first; buckets without values are left out */
            data: {
                /**
                 * Format: date-time
                 * @description bucket start (UTC, aligned to the epoch)
                 */
                start: string;
                count: number;
                min: number;
                max: number;
                /** @description rounded to 6 decimal places */
                avg: number;
                /** @description nearest rank: the value at rank ⌈0.50·count⌉ of the sorted values */
                p50: number;
                /** @description nearest rank: the value at rank ⌈0.95·count⌉ */
                p95: number;
                /** @description nearest rank: the value at rank ⌈0.99·count⌉ */
                p99: number;
            }[];
        };
        PerformanceSummary: {
            data: components["schemas"]["PerformanceSummaryRow"][];
        };
        PerformanceSummaryRow: {
            service: string | null;
            metric: string;
            unit: string | null;
            count: number;
            min: number;
            max: number;
            /** @description rounded to 6 decimal places */
            avg: number;
            /** @description nearest rank: the value at rank ⌈0.50·count⌉ of the sorted values */
            p50: number;
            /** @description nearest rank: the value at rank ⌈0.95·count⌉ */
            p95: number;
            /** @description nearest rank: the value at rank ⌈0.99·count⌉ */
            p99: number;
        };
        /**
         * @description RFC 9457 problem details (application/problem+json).
         * @example {
         *       "type": "about:blank",
         *       "title": "Not Found",
         *       "status": 404,
         *       "detail": "no project prj_01JD3Z8Q6R2N5M7K9P4TXYZABC",
         *       "code": "not_found"
         *     }
         */
        Problem: {
            /** @description A URI naming the kind of problem; `about:blank` plus `code` for ours. */
            type: string;
            /** @description The HTTP status text. */
            title: string;
            /** @description The HTTP status code, repeated. */
            status: number;
            /** @description What went wrong, naming the field or header at fault. */
            detail: string;
            /** @description Stable snake_case word for programs; each response lists the values it can carry. */
            code: string;
        };
        /**
         * @description A project: the unit that API keys, events, error groups and webhook endpoints belong to.
         * @example {
         *       "id": "prj_01JD3Z8Q6R2N5M7K9P4TXYZABC",
         *       "orgId": "org_default",
         *       "name": "checkout",
         *       "createdAt": "2026-11-23T18:30:00.000Z",
         *       "updatedAt": "2026-11-23T18:30:00.000Z"
         *     }
         */
        Project: {
            /** @description prj_… */
            id: string;
            /** @description the organisation it belongs to */
            orgId: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** @description How much a project received lately, in total and by event type. */
        ProjectActivity: {
            /** @description prj_… */
            projectId: string;
            /** @description events with `ts` in the last 24 hours */
            eventsLast24h: number;
            /** @description the newest event’s `ts` */
            lastEventAt: string | null;
            /** @description by event type (`error` for error occurrences); types without any event are left out. `audit` holds the portal’s own management actions too (project and key created…), so a project that never received an event of its own has only `audit` */
            types: {
                [key: string]: {
                    /** @description events with `ts` in the last 24 hours */
                    eventsLast24h: number;
                    /** @description the newest event’s `ts` */
                    lastEventAt: string | null;
                };
            };
        };
        ProjectInput: {
            /** @description shown in lists and the UI */
            name: string;
        };
        ProjectList: {
            /** @description this page, newest first */
            data: components["schemas"]["Project"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        ProjectRetention: {
            projectId: string;
            /** @description the project’s setting for every type; null when it has none */
            days: number | null;
            /** @description the project’s settings per event type */
            modules: {
                [key: string]: number;
            };
            /** @description by event type: the days in force, and which setting decided */
            effective: {
                [key: string]: {
                    days: number;
                    /** @description which setting decided: the project’s for this type, the project’s `days`, or the install’s `RETENTION_DAYS[_<TYPE>]` */
                    source: "project_module" | "project" | "install";
                    /** @description the module’s status read, which answers its size on disk and oldest event */
                    statusPath: string;
                };
            };
        };
        ProjectRetentionInput: {
            /** @description days for every event type whose module keeps no default of its own (audit does); null: the install’s settings */
            days: number | null;
            /** @description days per event type, over `days` and the install’s settings */
            modules?: {
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                audit?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                config?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                cost?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                deploy?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                error?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                feature_flag?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                log?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                performance?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                repository?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                session?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                tenant?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                trace?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                video?: number;
                /** @description days an event is kept; it goes within a day after that (whole UTC days) */
                webhook?: number;
            };
        };
        /** @description An event that was not stored, and why. */
        RejectedEvent: {
            /** @description zero-based position in `events` */
            index: number;
            /** @description the field and the problem, e.g. `data.actor: required` */
            reason: string;
        };
        /** @description Release health: crash-free sessions and users, and adoption, of one release in one environment. */
        ReleaseHealth: {
            release: string;
            environment: string | null;
            /** @description sessions that started in the window */
            sessions: number;
            crashedSessions: number;
            /** @description ended abruptly without a crash (an app killed, a hang) */
            abnormalSessions: number;
            /** @description saw a handled error, and neither crashed nor ended abnormally */
            erroredSessions: number;
            /** @description distinct users (`distinctId`) of those sessions */
            users: number;
            /** @description users with at least one crashed session */
            crashedUsers: number;
            crashFreeSessions: number | null;
            crashFreeUsers: number | null;
            sessionAdoption: number | null;
            userAdoption: number | null;
        };
        ReportedDestination: {
            /** @description the attempts’ `destination`, else their URL */
            destination: string;
            /** @description URL of the latest attempt */
            url: string;
            attempts: number;
            /** @description attempts with a 2xx status code */
            succeeded: number;
            /** @description every other attempt, including those reported without a status code */
            failed: number;
            /** @description succeeded / attempts, 0–1, 4 decimal places */
            successRate: number;
            /** Format: date-time */
            lastAttemptAt: string;
            lastStatusCode: number | null;
        };
        ReportedDestinations: {
            data: components["schemas"]["ReportedDestination"][];
        };
        RepositoryAuthor: {
            author: string;
            /** @description events in the window */
            commits: number;
            /** Format: date-time */
            firstCommitAt: string;
            /** Format: date-time */
            lastCommitAt: string;
            lastRepo: string;
            lastBranch: string | null;
            lastCommit: string | null;
        };
        RepositoryAuthorList: {
            /** @description this page, newest first */
            data: components["schemas"]["RepositoryAuthor"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        RepositoryBranch: {
            repo: string;
            branch: string | null;
            provider: string | null;
            /** @description events in the window */
            commits: number;
            lastCommit: string | null;
            lastAuthor: string | null;
            /** Format: date-time */
            lastPushedAt: string;
            /** @description the latest event */
            eventId: string;
        };
        RepositoryBranchList: {
            /** @description this page, newest first */
            data: components["schemas"]["RepositoryBranch"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A stored `repository` event. */
        RepositoryEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "repository";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["RepositoryPayload"];
        };
        RepositoryEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["RepositoryEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description How a project’s commits link to its code host (a project setting: admins change it, and each change is audited). */
        RepositoryLinks: {
            projectId: string;
            /** @description null until an admin sets it: commits are then shown without links */
            provider: ("github" | "gitlab" | "gitea") | null;
            baseUrl: string | null;
            /** @description the repository of commits that name none (a deploy’s): the one set, else the one most recently pushed to */
            repo: string | null;
            /** @description a commit’s page, with `{repo}` (owner/name, as repository events give it) and `{commit}` to fill in */
            commitUrl: string | null;
            /** @description the commits between two, with `{repo}`, `{from}` and `{to}` to fill in */
            compareUrl: string | null;
        };
        RepositoryLinksInput: {
            /** @description the code host, which decides the paths of commit and compare pages */
            provider: "github" | "gitlab" | "gitea";
            /**
             * @description the host’s address, without the repository: `https://github.com`, `https://gitlab.example.com`
             * @example https://github.com
             */
            baseUrl: string;
            /** @description owner/name */
            repo?: string;
        };
        RepositoryModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /**
         * @example {
         *       "provider": "github",
         *       "repo": "acme/checkout-api",
         *       "branch": "main",
         *       "commit": "9f2c1e7",
         *       "author": "carol"
         *     }
         */
        RepositoryPayload: {
            /** @description github, gitlab, bitbucket — or your own */
            provider?: string;
            /** @description owner/name */
            repo: string;
            branch?: string;
            /** @description commit SHA */
            commit?: string;
            author?: string;
            /** @description the commit message’s first line */
            message?: string;
            /** @description paths the commit touched, from the repository root: suspect commits rank those that touched an error’s in-app files first */
            files?: string[];
        } & {
            [key: string]: unknown;
        };
        RotatedEndpointSecret: {
            /** @description the endpoint */
            id: string;
            /** @description whsec_… (Standard Webhooks form); shown in this response only */
            secret: string;
            /** @description whs_…: the secret version; attempts name the version that signed them */
            secretId: string;
            /**
             * Format: date-time
             * @description until then every attempt carries a signature by each version
             */
            previousSecretExpiresAt: string;
        };
        /**
         * @description What Sentry’s own endpoints answer: the id of the event taken.
         * @example {
         *       "id": "9ec79c33ec9942ab8353589fcb2e04dc"
         *     }
         */
        SentryAccepted: {
            /** @description the id of the first event or transaction, as Sentry answers; null when the request held none */
            id: string | null;
        };
        /** @description A stored `session` event. */
        SessionEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "session";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["SessionPayload"];
        };
        SessionEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["SessionEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @description Either sessionId and status (one session’s update) or counts (exited, errored, abnormal, crashed) of sessions that started in one bucket.
         * @example {
         *       "release": "shop@1.4.2",
         *       "environment": "production",
         *       "started": "2024-11-23T19:26:00.000Z",
         *       "sessionId": "7c7b6585-f901-4351-bf8d-02711b721929",
         *       "distinctId": "u-42",
         *       "status": "exited",
         *       "errors": 0
         *     }
         */
        SessionPayload: {
            /** @description the release the session ran */
            release: string;
            /** @description production, staging, … */
            environment?: string;
            /**
             * Format: date-time
             * @description when the session started (an aggregate: its bucket’s start)
             */
            started: string;
            /** @description the user: counted for crash-free users and adoption */
            distinctId?: string;
            /** @description one session’s id (`sid`): its updates count as one session, in the worst state it reported */
            sessionId?: string;
            /** @description required with sessionId: ok (running), exited, errored, abnormal or crashed */
            status?: "ok" | "exited" | "errored" | "abnormal" | "crashed";
            /** @description errors seen in the session; above 0 it counts as errored */
            errors?: number;
            /** @description the session’s first update */
            init?: boolean;
            /** @description seconds */
            duration?: number;
            /** @description aggregate: sessions that ended normally */
            exited?: number;
            /** @description aggregate: sessions that ended with a handled error */
            errored?: number;
            /** @description aggregate: sessions that ended abruptly without a crash */
            abnormal?: number;
            /** @description aggregate: sessions that crashed */
            crashed?: number;
        } & {
            [key: string]: unknown;
        };
        SessionsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        Span: {
            eventId: string;
            spanId: string;
            parentSpanId: string | null;
            serviceName: string | null;
            name: string | null;
            /**
             * Format: date-time
             * @description the span event’s `ts`
             */
            startedAt: string;
            durationMs: number | null;
            /** @description the span event’s payload as sent */
            data: {
                [key: string]: unknown;
            };
        };
        SpanSummary: {
            spanId: string;
            name: string | null;
            serviceName: string | null;
            durationMs: number | null;
        };
        /** @description One stack frame; only in-app frames count for grouping. */
        StackFrame: {
            function: string | null;
            module: string | null;
            filename: string | null;
            lineno: number | null;
            colno: number | null;
            /** @description your code, not a library or the runtime */
            inApp: boolean;
        };
        SuspectCommit: {
            commit: string;
            repo: string;
            branch: string | null;
            author: string | null;
            message: string | null;
            /** Format: date-time */
            ts: string;
            /** @description the repository event that recorded it */
            eventId: string;
            /** @description the paths it touched, as its repository event listed them */
            files: string[];
            /** @description those among them that are files of the group’s in-app frames: the reason it ranks first */
            matchedFiles: string[];
            url: string | null;
        };
        /** @description The commits that may have introduced a group: those shipped by the first release it was seen in. */
        SuspectCommits: {
            release: string | null;
            releaseDeploy: {
                eventId: string;
                /** Format: date-time */
                ts: string;
                service: string;
                environment: string | null;
                /** @description its `release`, else its `version` */
                release: string;
                commit: string | null;
            } | null;
            previousDeploy: {
                eventId: string;
                /** Format: date-time */
                ts: string;
                service: string;
                environment: string | null;
                /** @description its `release`, else its `version` */
                release: string;
                commit: string | null;
            } | null;
            /** @description `commits`: the commits after the previous deploy’s commit up to the release’s, on the release commit’s branch; `time`: the commits pushed between the two deploys (a deploy’s commit is not among the repository events); `none`: nothing to go on */
            basis: "commits" | "time" | "none";
            /** @description why the list is what it is, in a sentence */
            reason: string;
            /** @description files of the in-app frames of the group’s recent occurrences */
            inAppFiles: string[];
            compareUrl: string | null;
            /** @description commits that touched an in-app file first (most such files first), then the newest first */
            data: components["schemas"]["SuspectCommit"][];
        };
        /** @description A stored `tenant` event. */
        TenantEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "tenant";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["TenantPayload"];
        };
        TenantEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["TenantEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @example {
         *       "plan": "team",
         *       "ingestLimitPerSecond": 500
         *     }
         */
        TenantPayload: {
            /** @description the project it describes; the sending project when absent */
            projectId?: string;
            /** @description free, team, enterprise — or your own */
            plan: string;
            /** @description events per second; lowers the project’s ingest limit, never above the install’s */
            ingestLimitPerSecond?: number;
        } & {
            [key: string]: unknown;
        };
        TenantPlan: {
            /** @description the project the plan is for (the event’s `projectId`, else the sending project) */
            projectId: string;
            /** @description from the latest event */
            plan: string;
            ingestLimitPerSecond: number | null;
            /**
             * Format: date-time
             * @description time of the latest event
             */
            updatedAt: string;
            changes: number;
            /** @description the latest event */
            eventId: string;
        };
        TenantPlanChange: {
            eventId: string;
            /** Format: date-time */
            changedAt: string;
            plan: string;
            ingestLimitPerSecond: number | null;
        };
        TenantPlanChangeList: {
            /** @description this page, newest first */
            data: components["schemas"]["TenantPlanChange"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        TenantPlanDetail: {
            /** @description the project the plan is for (the event’s `projectId`, else the sending project) */
            projectId: string;
            /** @description from the latest event */
            plan: string;
            ingestLimitPerSecond: number | null;
            /**
             * Format: date-time
             * @description time of the latest event
             */
            updatedAt: string;
            changes: number;
            /** @description the latest event */
            eventId: string;
            history: components["schemas"]["TenantPlanChangeList"];
        };
        TenantPlanList: {
            /** @description this page, newest first */
            data: components["schemas"]["TenantPlan"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        TenantsModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        Trace: {
            traceId: string;
            rootSpan: components["schemas"]["SpanSummary"];
            route: string | null;
            statusCode: number | null;
            spanCount: number;
            /** @description services with a span in the trace, by name */
            services: string[];
            /**
             * Format: date-time
             * @description the earliest span’s time
             */
            startedAt: string;
            /** @description from the earliest span’s start to the latest end (start + durationMs) of any span */
            durationMs: number;
        };
        TraceDetail: {
            traceId: string;
            rootSpan: components["schemas"]["SpanSummary"] | null;
            spanCount: number;
            /** @description services with a span in the trace, by name */
            services: string[];
            /**
             * Format: date-time
             * @description the earliest span’s time
             */
            startedAt: string;
            /** @description from the earliest span’s start to the latest end (start + durationMs) of any span */
            durationMs: number;
            /** @description in start order, at most 10000 */
            spans: components["schemas"]["Span"][];
            /** @description true when the trace has more than 10000 spans */
            truncated: boolean;
        };
        /** @description An occurrence with the group it belongs to. */
        TraceErrorOccurrence: {
            /** @description occ_…, or the evt_… of an ingested error event */
            id: string;
            /** @description the fingerprint computed for it */
            fingerprint: string;
            /** Format: date-time */
            timestamp: string;
            /** Format: date-time */
            receivedAt: string;
            name: string;
            message: string;
            stack: string | null;
            frames: components["schemas"]["StackFrame"][] | null;
            release: string | null;
            environment: string | null;
            service: string | null;
            request: {
                [key: string]: unknown;
            } | null;
            /** @description the capture’s fields beyond the known ones */
            metadata: {
                [key: string]: unknown;
            };
            traceId: string | null;
            spanId: string | null;
            /** @description what happened before it, oldest first (the newest 100 sent) */
            breadcrumbs: components["schemas"]["Breadcrumb"][];
            /** @description the receivers that reported it (`sentry`, `opentelemetry`): both when one exception reported twice for its span was stored once */
            reportedBy: string[];
            /** @description the fingerprint its group is known by: `GET /api/errors/groups/{fingerprint}` */
            groupFingerprint: string;
            groupName: string;
            /** @description triage state; an occurrence reopens a resolved group */
            groupStatus: "unresolved" | "resolved" | "ignored";
        };
        TraceErrorOccurrenceList: {
            /** @description this page, newest first */
            data: components["schemas"]["TraceErrorOccurrence"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A stored `trace` event. */
        TraceEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "trace";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["TracePayload"];
        };
        TraceEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["TraceEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        TraceList: {
            /** @description this page, newest first */
            data: components["schemas"]["Trace"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /**
         * @example {
         *       "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
         *       "spanId": "00f067aa0ba902b7",
         *       "serviceName": "checkout-api",
         *       "name": "GET /cart",
         *       "durationMs": 42
         *     }
         */
        TracePayload: {
            traceId: string;
            spanId: string;
            /** @description absent on the root span */
            parentSpanId?: string;
            serviceName?: string;
            /** @description operation name */
            name?: string;
            /** @description milliseconds */
            durationMs?: number;
        } & {
            [key: string]: unknown;
        };
        TracesModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /** @description A stored `video` event. */
        VideoEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "video";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["VideoPayload"];
        };
        VideoEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["VideoEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        VideoJob: {
            jobId: string;
            status: string | null;
            targetUrl: string | null;
            artifactUrl: string | null;
            /**
             * Format: date-time
             * @description time of the job’s first event
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description time of the job’s latest event
             */
            updatedAt: string;
            events: number;
            /** @description the latest event */
            eventId: string;
        };
        VideoJobDetail: {
            jobId: string;
            status: string | null;
            targetUrl: string | null;
            artifactUrl: string | null;
            /**
             * Format: date-time
             * @description time of the job’s first event
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description time of the job’s latest event
             */
            updatedAt: string;
            events: number;
            /** @description the latest event */
            eventId: string;
            history: components["schemas"]["VideoJobEventList"];
        };
        VideoJobEvent: {
            eventId: string;
            /** Format: date-time */
            ts: string;
            status: string | null;
            artifactUrl: string | null;
        };
        VideoJobEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["VideoJobEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        VideoJobList: {
            /** @description this page, newest first */
            data: components["schemas"]["VideoJob"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        VideoModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
        };
        /**
         * @example {
         *       "jobId": "job-1",
         *       "targetUrl": "https://example.com/",
         *       "status": "done",
         *       "artifactUrl": "https://cdn.example.com/v.mp4"
         *     }
         */
        VideoPayload: {
            jobId: string;
            /** @description the page or stream recorded */
            targetUrl?: string;
            /** @description queued, recording, processing, done, failed — or your own */
            status?: string;
            /** @description where the finished video is */
            artifactUrl?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description A stored `webhook` event. */
        WebhookEvent: {
            /** @description evt_… event id */
            id: string;
            /** @description prj_… project the event was ingested for */
            projectId: string;
            /** @enum {string} */
            type: "webhook";
            /**
             * Format: date-time
             * @description when it happened, as sent in `ts`
             */
            ts: string;
            /**
             * Format: date-time
             * @description when the portal received it
             */
            receivedAt: string;
            data: components["schemas"]["WebhookPayload"];
        };
        WebhookEventList: {
            /** @description this page, newest first */
            data: components["schemas"]["WebhookEvent"][];
            /** @description pass as `cursor` for the next page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A delivered message. */
        WebhookMessage: {
            /** @description msg_… message id, also in `webhook-id` */
            id: string;
            /**
             * @description the event type
             * @constant
             */
            type: "invoice.paid";
            /**
             * Format: date-time
             * @description when the message was created
             */
            timestamp: string;
            /**
             * @description the `payload` given to deliver
             * @example {
             *       "invoiceId": "inv_42",
             *       "amount": 1200
             *     }
             */
            data: {
                [key: string]: unknown;
            };
        };
        /**
         * @example {
         *       "destination": "billing",
         *       "url": "https://hooks.example.com/billing",
         *       "statusCode": 200,
         *       "attempt": 1
         *     }
         */
        WebhookPayload: {
            /** @description destination name */
            destination?: string;
            url: string;
            /** @description HTTP status code */
            statusCode?: number;
            /** @description attempt number, from 1 */
            attempt?: number;
        } & {
            [key: string]: unknown;
        };
        WebhooksModuleStatus: {
            module: string;
            eventType: string;
            /** @enum {string} */
            status: "ok";
            projectId?: string;
            /** @description events stored for project_id */
            events?: number;
            lastEventAt?: string | null;
            /** @description with project_id: how many flags, jobs, paths, … the module’s summaries hold */
            summaries?: {
                [key: string]: number;
            };
            /** @description bytes on disk of the module’s tables with their indexes and partitions, all projects together (SQLite: dbstat, measured at most a minute ago; PostgreSQL: pg_total_relation_size) */
            sizeBytes: number;
            /** @description the oldest event stored: of project_id, or of the organisation’s projects */
            oldestEventAt: string | null;
            /** @description days events are kept: project_id’s setting in force, or the install’s (GET /api/projects/{id}/retention says why) */
            retentionDays: number;
            /** @description pending deliveries: due, waiting for a retry, or in flight */
            queueDepth: number;
            /** @description age of the oldest pending delivery; null when none is pending */
            oldestPendingAgeMs: number | null;
            /** @description finished attempts (not in_progress) started in the last hour */
            attemptsLastHour: number;
            /** @description succeeded attempts / attempts over the last hour; null without attempts */
            successRateLastHour: number | null;
            /** @description the dispatcher of the portal process that answered */
            dispatcher: {
                state: "running" | "stopping" | "stopped";
                /** @description this portal process’s dispatcher id */
                instance: string | null;
                inFlight: number;
                /** @description WEBHOOK_CONCURRENCY */
                concurrency: number;
                /** @description WEBHOOK_ENDPOINT_CONCURRENCY */
                endpointConcurrency: number;
            };
        };
    };
    responses: {
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_request: the `detail` names the field or header at fault",
                 *       "code": "invalid_request"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_request" | "invalid_url";
                };
            };
        };
        /** @description The query or a parameter is refused (named in the message), or no project is chosen. */
        BadRequest2: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "text/plain": string;
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_request: the `detail` names the field or header at fault",
                 *       "code": "invalid_request"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_request" | "invalid_url";
                };
            };
        };
        /** @description The query or a parameter is refused (named in `error`), or no project is chosen. */
        BadRequest3: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    /** @enum {string} */
                    status: "error";
                    /** @description bad_data, not_found, … */
                    errorType: string;
                    error: string;
                };
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_request: the `detail` names the field or header at fault",
                 *       "code": "invalid_request"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_request" | "invalid_url";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidCursor: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_request: the `detail` names the field or header at fault",
                 *       "code": "invalid_request"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_request" | "invalid_url" | "invalid_cursor";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidEnvelopeInvalidEventInvalidGzipInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_envelope: the `detail` names the field or header at fault",
                 *       "code": "invalid_envelope"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_envelope" | "invalid_event" | "invalid_gzip" | "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidEventInvalidGzipInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_event: the `detail` names the field or header at fault",
                 *       "code": "invalid_event"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_event" | "invalid_gzip" | "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidIdempotencyKeyInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_idempotency_key: the `detail` names the field or header at fault",
                 *       "code": "invalid_idempotency_key"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_idempotency_key" | "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidIdempotencyKeyMissingEventsInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_idempotency_key: the `detail` names the field or header at fault",
                 *       "code": "invalid_idempotency_key"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_idempotency_key" | "missing_events" | "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_request: the `detail` names the field or header at fault",
                 *       "code": "invalid_request"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request is malformed; `detail` names the field or parameter. */
        BadRequestInvalidOtlpInvalidProtobufInvalidGzipInvalidJsonTooDeepInvalidContentLength: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "invalid_otlp: the `detail` names the field or header at fault",
                 *       "code": "invalid_otlp"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "invalid_otlp" | "invalid_protobuf" | "invalid_gzip" | "invalid_request" | "invalid_url" | "invalid_json" | "too_deep" | "invalid_content_length";
                };
            };
        };
        /** @description The request conflicts with one in flight. */
        ConflictBackupUnsupported: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Conflict",
                 *       "status": 409,
                 *       "detail": "backup_unsupported: the `detail` names the field or header at fault",
                 *       "code": "backup_unsupported"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "backup_unsupported";
                };
            };
        };
        /** @description The request conflicts with one in flight. */
        ConflictEndpointDisabled: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Conflict",
                 *       "status": 409,
                 *       "detail": "endpoint_disabled: the `detail` names the field or header at fault",
                 *       "code": "endpoint_disabled"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "endpoint_disabled";
                };
            };
        };
        /** @description The request conflicts with one in flight. */
        ConflictIdempotencyKeyInFlight: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Conflict",
                 *       "status": 409,
                 *       "detail": "idempotency_key_in_flight: the `detail` names the field or header at fault",
                 *       "code": "idempotency_key_in_flight"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "idempotency_key_in_flight";
                };
            };
        };
        /** @description The request conflicts with one in flight. */
        ConflictRuleNameTaken: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Conflict",
                 *       "status": 409,
                 *       "detail": "rule_name_taken: the `detail` names the field or header at fault",
                 *       "code": "rule_name_taken"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "rule_name_taken";
                };
            };
        };
        /** @description The body is larger than the limit. */
        ContentTooLargeBatchTooLargeBodyTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Content Too Large",
                 *       "status": 413,
                 *       "detail": "batch_too_large: the `detail` names the field or header at fault",
                 *       "code": "batch_too_large"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "batch_too_large" | "body_too_large";
                };
            };
        };
        /** @description The body is larger than the limit. */
        ContentTooLargeBodyTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Content Too Large",
                 *       "status": 413,
                 *       "detail": "body_too_large: the `detail` names the field or header at fault",
                 *       "code": "body_too_large"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "body_too_large";
                };
            };
        };
        /** @description The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature). */
        ForbiddenAccessTokenRequired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Forbidden",
                 *       "status": 403,
                 *       "detail": "access_token_required: the `detail` names the field or header at fault",
                 *       "code": "access_token_required"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "access_token_required";
                };
            };
        };
        /** @description The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature). */
        ForbiddenAccessTokenRequiredAdminRequired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Forbidden",
                 *       "status": 403,
                 *       "detail": "access_token_required: the `detail` names the field or header at fault",
                 *       "code": "access_token_required"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "access_token_required" | "admin_required";
                };
            };
        };
        /** @description The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature). */
        ForbiddenApiKeyRequiredScopeRequired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Forbidden",
                 *       "status": 403,
                 *       "detail": "api_key_required: the `detail` names the field or header at fault",
                 *       "code": "api_key_required"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "api_key_required" | "scope_required";
                };
            };
        };
        /** @description The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature). */
        ForbiddenInstallAdminRequiredAccessTokenRequiredAdminRequired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Forbidden",
                 *       "status": 403,
                 *       "detail": "install_admin_required: the `detail` names the field or header at fault",
                 *       "code": "install_admin_required"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "install_admin_required" | "access_token_required" | "admin_required";
                };
            };
        };
        /** @description The token is valid but may not do this (viewer writing, API key reading, API key without the scope, bad signature). */
        ForbiddenMissingSignatureInvalidSignatureApiKeyRequiredScopeRequired: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Forbidden",
                 *       "status": 403,
                 *       "detail": "missing_signature: the `detail` names the field or header at fault",
                 *       "code": "missing_signature"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "missing_signature" | "invalid_signature" | "api_key_required" | "scope_required";
                };
            };
        };
        /** @description No such resource in the caller’s organisation. */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Not Found",
                 *       "status": 404,
                 *       "detail": "not_found: the `detail` names the field or header at fault",
                 *       "code": "not_found"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "not_found";
                };
            };
        };
        /** @description The request line and headers are larger than 16 KiB; answered before routing, and the connection is closed. */
        RequestHeaderFieldsTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Request Header Fields Too Large",
                 *       "status": 431,
                 *       "detail": "headers_too_large: the `detail` names the field or header at fault",
                 *       "code": "headers_too_large"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "headers_too_large";
                };
            };
        };
        /** @description The portal is overloaded (`overloaded`: its event loop lags, too many writes wait for their commit, no database connection came free within DATABASE_POOL_WAIT_MS, or the event store could not get the memory a query needs) or its database is unreachable (`database_unavailable`); retry after `Retry-After` seconds. */
        ServiceUnavailable: {
            headers: {
                /** @description seconds to wait before retrying */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Service Unavailable",
                 *       "status": 503,
                 *       "detail": "overloaded: the `detail` names the field or header at fault",
                 *       "code": "overloaded"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "overloaded" | "database_unavailable" | "authorization_unavailable";
                };
            };
        };
        /** @description Rate limit reached; retry after `Retry-After` seconds. */
        TooManyRequests: {
            headers: {
                /** @description seconds to wait before retrying */
                "Retry-After"?: number;
                /** @description the project’s limit, per second, of the bucket that refused the request */
                "RateLimit-Limit"?: number;
                /** @description what is left of it now */
                "RateLimit-Remaining"?: number;
                /** @description seconds until it is full again */
                "RateLimit-Reset"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Too Many Requests",
                 *       "status": 429,
                 *       "detail": "rate_limited: the `detail` names the field or header at fault",
                 *       "code": "rate_limited"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "rate_limited";
                };
            };
        };
        /** @description The bearer token is missing, unknown or revoked. */
        Unauthorized: {
            headers: {
                /** @description always `Bearer`: the credential this API takes */
                "WWW-Authenticate"?: "Bearer";
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unauthorized",
                 *       "status": 401,
                 *       "detail": "missing_token: the `detail` names the field or header at fault",
                 *       "code": "missing_token"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "missing_token" | "invalid_token";
                };
            };
        };
        /** @description The request is well-formed but cannot be applied. */
        UnprocessableContentEndpointUnavailable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unprocessable Content",
                 *       "status": 422,
                 *       "detail": "endpoint_unavailable: the `detail` names the field or header at fault",
                 *       "code": "endpoint_unavailable"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "endpoint_unavailable";
                };
            };
        };
        /** @description The request is well-formed but cannot be applied. */
        UnprocessableContentNotInGroupLastFingerprint: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unprocessable Content",
                 *       "status": 422,
                 *       "detail": "not_in_group: the `detail` names the field or header at fault",
                 *       "code": "not_in_group"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "not_in_group" | "last_fingerprint";
                };
            };
        };
        /** @description The request is well-formed but cannot be applied. */
        UnprocessableContentOtherProject: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unprocessable Content",
                 *       "status": 422,
                 *       "detail": "other_project: the `detail` names the field or header at fault",
                 *       "code": "other_project"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "other_project";
                };
            };
        };
        /** @description The body is of a media type (or Content-Encoding) the operation does not take: JSON operations take application/json only. */
        UnsupportedMediaTypeUnsupportedContentEncodingUnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unsupported Media Type",
                 *       "status": 415,
                 *       "detail": "unsupported_content_encoding: the `detail` names the field or header at fault",
                 *       "code": "unsupported_content_encoding"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "unsupported_content_encoding" | "unsupported_media_type";
                };
            };
        };
        /** @description The body is of a media type (or Content-Encoding) the operation does not take: JSON operations take application/json only. */
        UnsupportedMediaTypeUnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "about:blank",
                 *       "title": "Unsupported Media Type",
                 *       "status": 415,
                 *       "detail": "unsupported_media_type: the `detail` names the field or header at fault",
                 *       "code": "unsupported_media_type"
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @enum {string} */
                    code?: "unsupported_media_type";
                };
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
