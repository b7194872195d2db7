/// <reference path="./interfaces/guild-plugin-config.d.ts" />
/// <reference path="./interfaces/guild-plugin-connector-api.d.ts" />
/// <reference path="./interfaces/guild-plugin-http.d.ts" />
/// <reference path="./interfaces/guild-plugin-log.d.ts" />
/// <reference path="./interfaces/guild-plugin-types.d.ts" />
declare module 'guild:plugin/connector@0.2.0' {
  export type * as GuildPluginConfig020 from 'guild:plugin/config@0.2.0'; // import guild:plugin/config@0.2.0
  export type * as GuildPluginHttp020 from 'guild:plugin/http@0.2.0'; // import guild:plugin/http@0.2.0
  export type * as GuildPluginLog020 from 'guild:plugin/log@0.2.0'; // import guild:plugin/log@0.2.0
  export type * as GuildPluginTypes020 from 'guild:plugin/types@0.2.0'; // import guild:plugin/types@0.2.0
  export * as connectorApi from 'guild:plugin/connector-api@0.2.0'; // export guild:plugin/connector-api@0.2.0
}
