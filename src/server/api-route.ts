import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AsnResult } from '../engine/asn/lookup-asn.js';
import type { EngineContext } from '../engine/context.js';
import type { AccessMode } from '../engine/ip/ip-databases.js';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import type { Plan, PlanFeature, PlanTable } from '../keys/plans.js';
import type { LimitState } from './limits/gcra.js';
import type { TargetGuard } from './target-guard.js';

/** A JSON Schema object (draft 2020-12 as OpenAPI 3.1 uses it; fastify validates with Ajv). */
export type JsonSchema = Record<string, unknown>;

/** What the server knows of a request once it is authenticated. */
export interface RequestState {
  /** The caller's address (the peer, or what a trusted proxy says). */
  client: string;
  plan: Plan;
  /** The key the limits are counted under: `key:<id>`, or the caller's address on the free tier. */
  subject: string;
  /** The API key's id, or null without a key. */
  keyId: string | null;
  /** The limit state after charging this request; null until charged (or when it is not charged). */
  limit: LimitState | null;
  /** Items (lookups) the limits accepted for this request: 0 until charged, and when refused. */
  charged: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    netintel: RequestState;
  }
  interface FastifyContextConfig {
    /** An API route: authenticated, limited, with X-RateLimit-* headers. */
    api?: boolean;
  }
}

/** What route handlers use: the engine and the server's settings. */
export interface ApiContext {
  ctx: EngineContext;
  plans: PlanTable;
  guard: TargetGuard;
  /** IP lookup by address text over the server's datasets. */
  lookupIp(text: string): IpInfoRecord;
  /** ASN lookup by number or address over the server's datasets. */
  lookupAsn(query: string): AsnResult;
  /** How the IP datasets are read (for engine calls that take it). */
  dataMode: AccessMode;
}

/**
 * A route's handler: returns the answer's body (or a promise of it); sets
 * headers on `reply` but never calls `reply.send`.
 */
export type ApiHandler = (request: FastifyRequest, reply: FastifyReply, api: ApiContext) => unknown;

/** An example for the OpenAPI document and the docs page. */
export interface ApiExample {
  /** The query string or nothing (`?ip=8.8.8.8`). */
  query?: string;
  body?: unknown;
  response?: unknown;
}

/**
 * One endpoint of the API (docs/api.md, Endpoints): its path exactly as documented, its input
 * schema, what the plans allow, and the handler, a thin call into the
 * engine. A handler of null answers 501 until its engine exists; wiring it
 * is setting `handler`.
 */
export interface ApiRoute {
  method: 'GET' | 'POST';
  url: string;
  operationId: string;
  /** The OpenAPI tag it is listed under: mail checks, or lookups (the default). */
  group?: 'mail';
  summary: string;
  description: string;
  /** What the plan must include; null: every plan, the free tier included. */
  feature: PlanFeature | null;
  querystring?: JsonSchema;
  /**
   * Rules across the query parameters (`oneOf`, `dependentRequired`, `not`
   * over `required`), for the OpenAPI document: the handler enforces them
   * with its own messages, and the contract test checks that a request
   * breaking them is answered 400.
   */
  queryRules?: JsonSchema;
  body?: JsonSchema;
  /** Media types of a successful answer (default application/json). */
  produces?: readonly string[];
  /** Schema of a successful JSON answer, for the OpenAPI document. */
  responseSchema?: JsonSchema;
  responseDescription: string;
  examples?: readonly ApiExample[];
  /**
   * Items a request asks for, charged against the burst bucket and the
   * daily allowance (default 1).
   */
  items?: (request: FastifyRequest) => number;
  /** `items` is limited by the plan's batch size (the bulk forms; docs/api.md, Plans and limits). */
  batched?: boolean;
  /**
   * The handler waits on the network (DNS, SMTP): it gets the server's
   * request deadline. Local lookups answer in microseconds and skip the
   * per-request timer.
   */
  network?: boolean;
  handler: ApiHandler | null;
  /** For a route without a handler: what is missing, said in the 501 answer. */
  pending?: string;
}
