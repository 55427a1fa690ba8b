import type { EmailReport } from '../engine/mail/check-email.js';
import { NetintelError, peerErrorCode } from '../errors.js';
import type { ApiMapping } from './operation.js';

/** The checks GET /api/email-tests runs on their own (form 1) whose records are those of their commands. */
export type MailCheck = 'mx' | 'spf' | 'dkim' | 'bimi';

/**
 * The remote call of one mail check: GET /api/email-tests?type=CHECK, the
 * path the `email` operation serves, whose report holds the check's own
 * record. A check the report lists as failed is thrown as the error the
 * local check throws (code and message; the report does not carry the
 * details).
 */
export function mailCheckApi<S, R>(check: MailCheck, parameters: (settings: S) => Record<string, string> = () => ({})): ApiMapping<S, R> {
  return {
    method: 'GET',
    path: '/api/email-tests',
    feature: null,
    query: (domain, settings) => ({ ...parameters(settings), type: check, domain: domain ?? undefined }),
    subject: () => 'domain',
    record: ({ body }) => {
      const report = body as EmailReport;
      const record = report[check];
      if (record !== null) return record as R;
      const failure = report.errors.find((item) => item.check === check);
      // A report with neither the record nor its failure is the server's fault, not a bug here.
      throw new NetintelError((failure && peerErrorCode(failure.code)) ?? 'upstream', failure?.message ?? `the server's ${check} report holds no ${check} record`);
    },
  };
}
