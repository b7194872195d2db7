import type { MemoryUpdate, Document, Response, ToolOutcome } from "./index.js";

export interface FakeHostOptions {
  tools?: Record<string, unknown | ToolOutcome | Error | ((input: any) => unknown)>;
  config?: Record<string, string>;
  memory?: Partial<Record<"team" | "private", string>>;
  memoryRights?: string[];
  http?: (method: string, url: string, headers: [string, string][], body?: Uint8Array) => Omit<Response, "text" | "json">;
  skills?: Record<string, { description: string; body: string; files?: Record<string, Uint8Array> }>;
  progress?: boolean;
  plugin?: string;
}

/** Stands in for the host in unit tests; deny by default. */
export class FakeHost {
  constructor(options?: FakeHostOptions);
  calls: [string, unknown][];
  logs: [string, string][];
  progress: string[];
  requests: [string, string][];
  memory: Partial<Record<"team" | "private", string>>;
  parentLive: boolean;
  memoryRead(scope: "team" | "private"): Document;
  memoryUpdate(scope: "team" | "private", text: string): MemoryUpdate;
}

export function withHost<R>(host: FakeHost, fn: () => R | Promise<R>): Promise<R>;
