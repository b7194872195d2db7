/// <reference path="./interfaces/guild-plugin-config.d.ts" />
/// <reference path="./interfaces/guild-plugin-http.d.ts" />
/// <reference path="./interfaces/guild-plugin-log.d.ts" />
/// <reference path="./interfaces/guild-plugin-memory.d.ts" />
/// <reference path="./interfaces/guild-plugin-progress.d.ts" />
/// <reference path="./interfaces/guild-plugin-skills.d.ts" />
/// <reference path="./interfaces/guild-plugin-specialist-api.d.ts" />
/// <reference path="./interfaces/guild-plugin-tools.d.ts" />
/// <reference path="./interfaces/guild-plugin-types.d.ts" />
declare module 'guild:plugin/specialist@0.2.0' {
  export type * as GuildPluginConfig020 from 'guild:plugin/config@0.2.0'; // import guild:plugin/config@0.2.0
  export type * as GuildPluginHttp020 from 'guild:plugin/http@0.2.0'; // import guild:plugin/http@0.2.0
  export type * as GuildPluginLog020 from 'guild:plugin/log@0.2.0'; // import guild:plugin/log@0.2.0
  export type * as GuildPluginMemory020 from 'guild:plugin/memory@0.2.0'; // import guild:plugin/memory@0.2.0
  export type * as GuildPluginProgress020 from 'guild:plugin/progress@0.2.0'; // import guild:plugin/progress@0.2.0
  export type * as GuildPluginSkills020 from 'guild:plugin/skills@0.2.0'; // import guild:plugin/skills@0.2.0
  export type * as GuildPluginTools020 from 'guild:plugin/tools@0.2.0'; // import guild:plugin/tools@0.2.0
  export type * as GuildPluginTypes020 from 'guild:plugin/types@0.2.0'; // import guild:plugin/types@0.2.0
  export * as specialistApi from 'guild:plugin/specialist-api@0.2.0'; // export guild:plugin/specialist-api@0.2.0
}
