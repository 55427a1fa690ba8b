/**
 * DNS record data in presentation (zone-file) form, as dig prints it
 * (RFC 1035 §5.1; CAA RFC 8659 §4.1; SRV RFC 2782), for the table and CSV views.
 */
export function presentDnsData(type: string, data: unknown): string {
  if (typeof data === 'string') return type === 'A' || type === 'AAAA' || data.startsWith('\\#') ? data : `${data}.`;
  const record = data as Record<string, unknown>;
  switch (type) {
    case 'MX':
      return `${record.preference} ${record.exchange}.`;
    case 'SOA':
      return `${record.mname}. ${record.rname}. ${record.serial} ${record.refresh} ${record.retry} ${record.expire} ${record.minimum}`;
    case 'TXT':
      return (record.strings as string[]).map((text) => JSON.stringify(text)).join(' ');
    case 'CAA':
      return `${record.flags} ${record.tag} ${JSON.stringify(record.value)}`;
    case 'SRV':
      return `${record.priority} ${record.weight} ${record.port} ${record.target}.`;
    default:
      return JSON.stringify(data);
  }
}

/** One answer as a dig-style line: `name. ttl IN type data`. */
export function presentDnsAnswer(answer: { name: string; ttlSeconds: number; type: string; data: unknown }): string {
  return `${answer.name}. ${answer.ttlSeconds} IN ${answer.type} ${presentDnsData(answer.type, answer.data)}`;
}
