/// <reference path="./interfaces/guild-plugin-config.d.ts" />
/// <reference path="./interfaces/guild-plugin-http.d.ts" />
/// <reference path="./interfaces/guild-plugin-log.d.ts" />
/// <reference path="./interfaces/guild-plugin-skill-loader-api.d.ts" />
/// <reference path="./interfaces/guild-plugin-types.d.ts" />
declare module 'guild:plugin/skill-loader@0.2.0' {
  export type * as GuildPluginConfig020 from 'guild:plugin/config@0.2.0'; // import guild:plugin/config@0.2.0
  export type * as GuildPluginHttp020 from 'guild:plugin/http@0.2.0'; // import guild:plugin/http@0.2.0
  export type * as GuildPluginLog020 from 'guild:plugin/log@0.2.0'; // import guild:plugin/log@0.2.0
  export type * as GuildPluginTypes020 from 'guild:plugin/types@0.2.0'; // import guild:plugin/types@0.2.0
  export * as skillLoaderApi from 'guild:plugin/skill-loader-api@0.2.0'; // export guild:plugin/skill-loader-api@0.2.0
}
