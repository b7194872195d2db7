/// <reference path="./interfaces/guild-plugin-config.d.ts" />
/// <reference path="./interfaces/guild-plugin-http.d.ts" />
/// <reference path="./interfaces/guild-plugin-log.d.ts" />
/// <reference path="./interfaces/guild-plugin-skill-loader-api.d.ts" />
/// <reference path="./interfaces/guild-plugin-types.d.ts" />
declare module 'guild:plugin/skill-loader@0.3.0' {
  export type * as GuildPluginConfig030 from 'guild:plugin/config@0.3.0'; // import guild:plugin/config@0.3.0
  export type * as GuildPluginHttp030 from 'guild:plugin/http@0.3.0'; // import guild:plugin/http@0.3.0
  export type * as GuildPluginLog030 from 'guild:plugin/log@0.3.0'; // import guild:plugin/log@0.3.0
  export type * as GuildPluginTypes030 from 'guild:plugin/types@0.3.0'; // import guild:plugin/types@0.3.0
  export * as skillLoaderApi from 'guild:plugin/skill-loader-api@0.3.0'; // export guild:plugin/skill-loader-api@0.3.0
}
