import type { Model, ModelKind } from '../../domain/catalogue.js';

const ADMIN = 'Admin';
const EXT = 'Mock extensions';

/** The tags, in the order tools show them. */
export const TAGS: readonly { name: string; description: string; extension?: true }[] = [
  { name: 'text-provider', description: 'Chat completions and image generation.' },
  { name: 'image-provider', description: 'Image editing.' },
  { name: 'video-provider', description: 'Video generation.' },
  { name: 'voice-provider', description: "Text to speech with a voice provider's voices." },
  { name: 'cloud-provider', description: 'Text to speech with neural voices and SSML.' },
  { name: 'Account', description: 'The calling key.' },
  {
    name: EXT,
    description:
      'Routes the API document does not list: model list, task polling, media downloads, this document, the health check.',
    extension: true,
  },
  { name: ADMIN, description: "The mock's admin API: fault rules, rate limits, the request journal.", extension: true },
];

// How each per-model limit reads, in the words of the request fields it bounds.
const PHRASES: Readonly<Record<string, (v: unknown) => string>> = {
  max_n: (v) => `\`n\` at most ${String(v)}`,
  max_output_tokens: (v) => `\`max_tokens\`/\`max_completion_tokens\` at most ${String(v)}`,
  context_window: (v) => `prompt at most ${String(v)} tokens`,
  max_characters: (v) => `\`text\` at most ${String(v)} characters`,
  sizes: (v) => `sizes ${(v as string[]).join(', ')}`,
  durations: (v) => `durations ${(v as number[]).join(', ')} s`,
  resolutions: (v) => `resolutions ${(v as string[]).join(', ')}`,
  modes: (v) => `modes ${(v as string[]).join(', ')}`,
  styles: (v) => `styles ${(v as string[]).join(', ')}`,
  response_formats: (v) =>
    (v as string[]).length
      ? `\`response_format\` ${(v as string[]).map((f) => `\`${f}\``).join(' or ')}`
      : '`response_format` not accepted',
  default_response_format: (v) => `images come back as \`${String(v)}\` by default`,
};

/**
 * The models of a kind, grouped by the limits they share, as a Markdown list (per-model rules a schema cannot state).
 */
export function modelLimits(models: readonly Model[], kind: ModelKind): string {
  const groups = new Map<string, string[]>();
  for (const m of models.filter((x) => x.kind === kind)) {
    const limits = Object.entries(m.limits).flatMap(([k, v]) => (PHRASES[k] ? [PHRASES[k](v)] : []));
    const text = limits.join('; ') || 'no further limits';
    groups.set(text, [...(groups.get(text) ?? []), `\`${m.id}\``]);
  }
  return [...groups].map(([limits, ids]) => `- ${ids.join(', ')}: ${limits}`).join('\n');
}
