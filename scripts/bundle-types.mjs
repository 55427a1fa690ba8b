// Rolls the package's declarations (dist/types, from tsconfig.lib.json) into
// one dist/netintel.d.ts with API Extractor, and checks the public surface
// against its reviewed report, docs/netintel.api.md. A change to what the
// package exports fails the build until the report is accepted with
// `npm run api-report` (which rewrites it) and committed with the change.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const local = process.argv.includes('--local');
const config = ExtractorConfig.loadFileAndPrepare(new URL('../api-extractor.json', import.meta.url).pathname);
const result = Extractor.invoke(config, {
  localBuild: local,
  messageCallback(message) {
    // Progress chatter; warnings and errors still print.
    if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
  },
});
if (result.apiReportChanged && !local) {
  console.error("netintel: the package's public API changed; review it with `npm run api-report` (updates docs/netintel.api.md) and commit the report with the change");
}
if (!result.succeeded) process.exitCode = 1;
