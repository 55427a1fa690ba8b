// One-off reference: what a plain Node script pays to answer one question with
// the `maxmind` package: import it, maxmind.open() (reads the whole city
// database into memory), one lookup, print the record as JSON.
// Usage: node maxmind-oneoff.mjs CITY.mmdb IP
import maxmind from 'maxmind';

const [path, ip = '8.8.8.8'] = process.argv.slice(2);
const reader = await maxmind.open(path);
process.stdout.write(`${JSON.stringify(reader.get(ip), null, 2)}\n`);
