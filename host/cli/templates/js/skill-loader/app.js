// Skill loader `{{name}}`: serves one built-in skill, `hello`, with one resource file. Replace
// SKILLS with your own source (files bundled in, an HTTP API through `http`, ...). Test with
// `npm test` (plain Node).
import { InvalidInput, skillLoader } from "guild-sdk";

/** name -> { description, body (SKILL.md), files: { resource path: text } } */
export const SKILLS = {
  hello: {
    description: "How to greet a new teammate.",
    body:
      "# Hello\n\nGreet by name, say what you work on, offer one next step.\n" +
      "Before the first meeting, go through `checklist.md`.\n",
    files: { "checklist.md": "- [ ] name\n- [ ] what you work on\n- [ ] one next step\n" },
  },
};

function skill(name) {
  const found = Object.hasOwn(SKILLS, name) ? SKILLS[name] : undefined;
  if (!found) throw new InvalidInput(`no skill \`${name}\`; skills: ${Object.keys(SKILLS).sort().join(", ")}`);
  return found;
}

// guild:plugin@0.3.0 exports one interface per world: the skill loader's is `skill-loader-api`.
export const skillLoaderApi = skillLoader({
  list: () => Object.entries(SKILLS).map(([name, s]) => ({ name, description: s.description })),
  load: (name) => skill(name).body,
  read(name, path) {
    const { files } = skill(name);
    if (!Object.hasOwn(files, path)) {
      throw new InvalidInput(`skill \`${name}\` has no resource \`${path}\`; it has: ${Object.keys(files).join(", ")}`);
    }
    return new TextEncoder().encode(files[path]);
  },
});
