/// <reference path="./guild-plugin-types.d.ts" />
declare module 'guild:plugin/http@0.3.0' {
  export function send(request: Request): Response;
  export type HostError = import('guild:plugin/types@0.3.0').HostError;
  export interface Request {
    /**
     * GET, POST, PUT, PATCH, DELETE or HEAD.
     */
    method: string,
    /**
     * Absolute http(s) URL.
     */
    url: string,
    headers: Array<[string, string]>,
    body?: Uint8Array,
  }
  export interface Response {
    status: number,
    headers: Array<[string, string]>,
    body: Uint8Array,
  }
}
