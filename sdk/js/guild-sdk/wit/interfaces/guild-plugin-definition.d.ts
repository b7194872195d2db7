declare module 'guild:plugin/definition@0.3.0' {
  /**
   * The plugin's name (`[plugin] name`).
   */
  export function name(): string;
  /**
   * The text of `prompt.md` in the plugin's folder, if there is one.
   */
  export function prompt(): string | undefined;
  /**
   * The manifest's `[agent]` table as a JSON object (`{}` when there is none).
   */
  export function settings(): string;
}
