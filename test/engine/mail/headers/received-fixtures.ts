/**
 * Received fields as each MTA writes them, from each one's documented or
 * well-known format (written here, not taken from real mail), with what the
 * reader must find in them. Addresses are documentation ones (RFC 5737,
 * RFC 3849) except where the format shows a provider's own.
 */
import type { ReceivedFields } from '../../../../src/engine/mail/headers/received.js';

export interface ReceivedFixture {
  mta: string;
  note: string;
  /** The field's value, folded as the MTA folds it. */
  value: string;
  parsed: boolean;
  expected: Partial<ReceivedFields>;
}

export const RECEIVED_FIXTURES: readonly ReceivedFixture[] = [
  {
    mta: 'postfix',
    note: 'relay over TLS 1.3, reverse name and address in the TCP-info comment',
    value:
      'from mail.example.com (mail.example.com [192.0.2.10])\r\n\t(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 (256/256 bits)\r\n\t key-exchange X25519 server-signature RSA-PSS (2048 bits) server-digest SHA256)\r\n\t(No client certificate requested)\r\n\tby mx.example.org (Postfix) with ESMTPS id 4Q1abc2DefzXyz\r\n\tfor <bob@example.org>; Tue,  1 Jul 2025 10:00:02 +0000 (UTC)',
    parsed: true,
    expected: {
      from_helo: 'mail.example.com',
      from_rdns: 'mail.example.com',
      from_ip: '192.0.2.10',
      by_host: 'mx.example.org',
      protocol: 'ESMTPS',
      tls_version: 'TLSv1.3',
      tls_cipher: 'TLS_AES_256_GCM_SHA384',
      id: '4Q1abc2DefzXyz',
      for: 'bob@example.org',
      timestamp: '2025-07-01T10:00:02Z',
    },
  },
  {
    mta: 'postfix',
    note: 'client without reverse DNS, plain SMTP',
    value: 'from helo.example.net (unknown [198.51.100.7])\n\tby mx.example.org (Postfix) with SMTP id 9F3C21234;\n\tWed, 2 Jul 2025 08:15:00 +0200 (CEST)',
    parsed: true,
    expected: { from_helo: 'helo.example.net', from_rdns: null, from_ip: '198.51.100.7', protocol: 'SMTP', id: '9F3C21234', timestamp: '2025-07-02T06:15:00Z' },
  },
  {
    mta: 'postfix',
    note: 'local submission by a user (pickup)',
    value: 'by host.example.org (Postfix, from userid 1000)\n\tid 0ABCDE12345; Tue,  1 Jul 2025 09:59:58 +0000 (UTC)',
    parsed: true,
    expected: { from_helo: null, from_ip: null, by_host: 'host.example.org', id: '0ABCDE12345', timestamp: '2025-07-01T09:59:58Z' },
  },
  {
    mta: 'postfix',
    note: 'IPv6 client, LMTP delivery to a mailbox server',
    value: 'from mx.example.org (mx.example.org [IPv6:2001:db8::25])\n\tby imap.example.org (Postfix) with LMTP id 5B2A1C0044\n\tfor <bob@example.org>; Tue,  1 Jul 2025 10:00:03 +0000 (UTC)',
    parsed: true,
    expected: { from_ip: '2001:db8::25', protocol: 'LMTP', for: 'bob@example.org' },
  },
  {
    mta: 'exim',
    note: 'TLS with the version in a comment and the cipher after "tls", envelope-from',
    value:
      'from mail.example.com ([192.0.2.20]:54321 helo=mail.example.com)\n\tby mx.example.org with esmtps  (TLS1.3) tls TLS_AES_256_GCM_SHA384\n\t(Exim 4.96)\n\t(envelope-from <alice@example.com>)\n\tid 1qAbCd-000123-Xy\n\tfor bob@example.org; Tue, 01 Jul 2025 10:00:05 +0000',
    parsed: true,
    expected: {
      from_helo: 'mail.example.com',
      from_ip: '192.0.2.20',
      by_host: 'mx.example.org',
      protocol: 'esmtps',
      tls_version: 'TLS1.3',
      tls_cipher: 'TLS_AES_256_GCM_SHA384',
      envelope_from: 'alice@example.com',
      id: '1qAbCd-000123-Xy',
      for: 'bob@example.org',
      timestamp: '2025-07-01T10:00:05Z',
    },
  },
  {
    mta: 'exim',
    note: 'address literal first, HELO in the comment',
    value: 'from [198.51.100.30] (helo=laptop.example.net)\n\tby smtp.example.org with esmtpsa (TLS1.2:ECDHE-RSA-AES256-GCM-SHA384:256)\n\t(Exim 4.94.2)\n\t(envelope-from <carol@example.net>)\n\tid 1qXyZw-0004ab-Cd; Mon, 30 Jun 2025 23:59:59 -0400',
    parsed: true,
    expected: { from_helo: 'laptop.example.net', from_ip: '198.51.100.30', protocol: 'esmtpsa', timestamp: '2025-07-01T03:59:59Z' },
  },
  {
    mta: 'sendmail',
    note: 'TLS facts in a comment after the id',
    value:
      'from mail.example.com (mail.example.com [192.0.2.40])\n\tby mx.example.org (8.17.1/8.17.1) with ESMTPS id 561A0B2C012345\n\t(version=TLSv1.3 cipher=TLS_AES_256_GCM_SHA384 bits=256 verify=NOT)\n\tfor <bob@example.org>; Tue, 1 Jul 2025 10:00:07 GMT',
    parsed: true,
    expected: { from_ip: '192.0.2.40', by_host: 'mx.example.org', protocol: 'ESMTPS', id: '561A0B2C012345', tls_version: 'TLSv1.3', tls_cipher: 'TLS_AES_256_GCM_SHA384', timestamp: '2025-07-01T10:00:07Z' },
  },
  {
    mta: 'sendmail',
    note: 'ident user before the name, "may be forged"',
    value: 'from helo.example.net (root@host.example.net [198.51.100.50] (may be forged))\n\tby mx.example.org (8.15.2/8.15.2) with SMTP id x61A0B2C;\n\tTue, 1 Jul 2025 03:00:00 -0700 (PDT)',
    parsed: true,
    expected: { from_helo: 'helo.example.net', from_rdns: 'host.example.net', from_ip: '198.51.100.50', timestamp: '2025-07-01T10:00:00Z' },
  },
  {
    mta: 'microsoft365',
    note: 'internal hop between Exchange Online servers, IPv6 without brackets',
    value:
      'from AM6PR04MB1234.eurprd04.prod.outlook.com (2603:10a6:20b:ac::12) by\n DB9PR04MB5678.eurprd04.prod.outlook.com (2603:10a6:10:1f1::20) with\n Microsoft SMTP Server (version=TLS1_2,\n cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.6521.26; Tue, 1 Jul\n 2025 10:00:09 +0000',
    parsed: true,
    expected: {
      from_helo: 'AM6PR04MB1234.eurprd04.prod.outlook.com',
      from_ip: '2603:10a6:20b:ac::12',
      by_host: 'DB9PR04MB5678.eurprd04.prod.outlook.com',
      protocol: 'Microsoft SMTP Server',
      tls_version: 'TLS1_2',
      tls_cipher: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
      id: '15.20.6521.26',
      timestamp: '2025-07-01T10:00:09Z',
    },
  },
  {
    mta: 'microsoft365',
    note: 'the frontend receiving from the Internet, "via Frontend Transport"',
    value:
      'from mail.example.com (192.0.2.60) by\n AM4PEPF00000001.mail.protection.outlook.com (10.167.16.1) with Microsoft SMTP\n Server (version=TLS1_3, cipher=TLS_AES_256_GCM_SHA384) id 15.20.6521.20 via\n Frontend Transport; Tue, 1 Jul 2025 10:00:08 +0000',
    parsed: true,
    expected: { from_helo: 'mail.example.com', from_ip: '192.0.2.60', protocol: 'Microsoft SMTP Server', tls_version: 'TLS1_3', id: '15.20.6521.20' },
  },
  {
    mta: 'microsoft365',
    note: 'a mailbox submission over MAPI, no from clause address',
    value: 'from DB9PR04MB5678.eurprd04.prod.outlook.com\n ([fe80::1234:5678:9abc:def0]) by DB9PR04MB5678.eurprd04.prod.outlook.com\n ([fe80::1234:5678:9abc:def0%5]) with mapi id 15.20.6521.026; Tue, 1 Jul 2025\n 10:00:01 +0000',
    parsed: true,
    expected: { from_ip: 'fe80::1234:5678:9abc:def0', protocol: 'mapi' },
  },
  {
    mta: 'gmail',
    note: 'Google\'s inbound MX, reverse name with a trailing dot',
    value:
      'from mail-sor-f41.google.com (mail-sor-f41.google.com. [209.85.220.41])\n        by mx.google.com with SMTPS id a1sor123456ejb.12.2025.07.01.03.00.00\n        for <bob@example.org>\n        (Google Transport Security);\n        Tue, 01 Jul 2025 03:00:00 -0700 (PDT)',
    parsed: true,
    expected: { from_helo: 'mail-sor-f41.google.com', from_rdns: 'mail-sor-f41.google.com', from_ip: '209.85.220.41', by_host: 'mx.google.com', protocol: 'SMTPS', for: 'bob@example.org', timestamp: '2025-07-01T10:00:00Z' },
  },
  {
    mta: 'gmail',
    note: 'internal hop named by an IPv6 address only',
    value: 'by 2002:a05:6a10:1234:b0:4a1:2345:6789 with SMTP id abc123csp456789pxb;\n        Tue, 1 Jul 2025 03:00:01 -0700 (PDT)',
    parsed: true,
    expected: { by_host: '2002:a05:6a10:1234:b0:4a1:2345:6789', protocol: 'SMTP', id: 'abc123csp456789pxb', timestamp: '2025-07-01T10:00:01Z' },
  },
  {
    mta: 'gmail',
    note: 'submission over HTTP (the web interface)',
    value: 'from 123456789012\n        named unknown\n        by gmailapi.google.com\n        with HTTPREST;\n        Tue, 1 Jul 2025 02:59:58 -0700',
    parsed: true,
    expected: { by_host: 'gmailapi.google.com', protocol: 'HTTPREST' },
  },
  {
    mta: 'amazon-ses',
    note: 'an SES outbound server reaching a receiver',
    value: 'from a8-12.smtp-out.amazonses.com (a8-12.smtp-out.amazonses.com [54.240.8.12])\n\tby mx.example.org (Postfix) with ESMTPS id 4Q1xyz; Tue,  1 Jul 2025 10:00:04 +0000 (UTC)',
    parsed: true,
    expected: { from_rdns: 'a8-12.smtp-out.amazonses.com', from_ip: '54.240.8.12' },
  },
  {
    mta: 'amazon-ses',
    note: 'SES\'s own submission hop with its service tag',
    value: 'from sender.example.com (ec2-203-0-113-5.compute-1.amazonaws.com [203.0.113.5])\n\tby email-smtp.us-east-1.amazonaws.com with SMTP (SimpleEmailService-d-ABCDEF123) id Xyz123AbC\n\tfor bob@example.org; Tue, 01 Jul 2025 10:00:00 +0000 (UTC)',
    parsed: true,
    expected: { from_helo: 'sender.example.com', from_rdns: 'ec2-203-0-113-5.compute-1.amazonaws.com', from_ip: '203.0.113.5', by_host: 'email-smtp.us-east-1.amazonaws.com', protocol: 'SMTP', id: 'Xyz123AbC' },
  },
  {
    mta: 'qmail',
    note: 'from the network, HELO and address in separate comments',
    value: 'from unknown (HELO mail.example.com) (192.0.2.80)\n  by mx.example.org with SMTP; 1 Jul 2025 10:00:06 -0000',
    parsed: true,
    expected: { from_helo: 'mail.example.com', from_ip: '192.0.2.80', by_host: 'mx.example.org', protocol: 'SMTP', timestamp: '2025-07-01T10:00:06Z' },
  },
  {
    mta: 'qmail',
    note: 'the local injection line',
    value: '(qmail 12345 invoked by uid 89); 1 Jul 2025 10:00:06 -0000',
    parsed: true,
    expected: { from_helo: null, by_host: null, timestamp: '2025-07-01T10:00:06Z' },
  },
  {
    mta: 'dovecot',
    note: 'LMTP delivery into a mailbox',
    value: 'from mx.example.org\n\tby imap.example.org with LMTPS\n\tid kFz3AbcdEfG1234 (envelope-from <alice@example.com>)\n\tfor <bob@example.org>; Tue, 01 Jul 2025 10:00:10 +0000',
    parsed: true,
    expected: { from_helo: 'mx.example.org', by_host: 'imap.example.org', protocol: 'LMTPS', envelope_from: 'alice@example.com', for: 'bob@example.org' },
  },
  {
    mta: 'broken',
    note: 'no date',
    value: 'from somewhere by somewhere-else',
    parsed: false,
    expected: { from_helo: 'somewhere', by_host: 'somewhere-else', timestamp: null },
  },
  {
    mta: 'broken',
    note: 'free text',
    value: 'this is not a trace field at all; nor is this a date',
    parsed: false,
    expected: { timestamp: null },
  },
];
