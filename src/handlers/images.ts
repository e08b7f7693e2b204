import { ApiError, ERRORS } from '../contract/errors.js';
import { digest, seedFrom } from '../lib/ids.js';
import { parseSize } from '../domain/mediaStore.js';
import type { Model, ResponseFormat } from '../domain/catalogue.js';
import type { Handler } from '../pipeline/handler.js';

/**
 * How the images come back: the request's response_format, else the model's default (fixtures/models.json).
 * A model that does not take the field (gpt-image-1 always answers b64_json) refuses it, as the real
 * service does, whatever its value: a client that sends it would fail there.
 */
function responseFormatOf(body: Record<string, unknown>, model: Model): ResponseFormat {
  const asked = body.response_format as ResponseFormat | undefined;
  const { response_formats: accepted = ['url', 'b64_json'], default_response_format: fallback = 'url' } = model.limits;
  if (asked === undefined) return fallback;
  if (!accepted.includes(asked)) {
    throw new ApiError(ERRORS.VALIDATION, {
      param: 'response_format',
      code: accepted.length ? 'invalid_value' : 'unknown_parameter',
      message: accepted.length
        ? `Invalid 'response_format': model '${model.id}' answers with ${accepted.join(' or ')}, not ${asked}.`
        : `Unknown parameter: 'response_format'. Model '${model.id}' always returns ${fallback} images; leave response_format out.`,
    });
  }
  return asked;
}

/** POST /text-provider/images/generations: OpenAI's images response; URLs serve real PNGs of the size. */
export const generateImages: Handler = ({ body, raw, baseUrl, services, plan }) => {
  const model = plan.model!; // checked once, before the handler (pipeline/plan.ts)
  const n = (body.n as number | undefined) ?? 1;
  const maxN = model.limits.max_n ?? 1;
  if (n > maxN) {
    throw new ApiError(ERRORS.VALIDATION, {
      param: 'n',
      code: 'integer_above_max_value',
      message: `Invalid 'n': integer above maximum value. Expected a value <= ${maxN} for model '${model.id}', but got ${n} instead.`,
    });
  }
  const format = responseFormatOf(body, model);
  const { images } = services.limits;
  const size = (body.size as string | undefined) ?? images.defaultSize;
  const style = (body.style as string | undefined) ?? images.defaultStyle;
  const quality = (body.quality as string | undefined) ?? images.defaultQuality;
  const d = digest('images.generate', raw);
  // The revised prompt quotes the prompt: a configured key in it comes back masked.
  const revised = `${services.secrets.text((body.prompt as string).trim())} (${style} style, ${quality} quality, ${size})`;
  const data = Array.from({ length: n }, (_, i) => {
    const seed = seedFrom(d, i * 4);
    if (format === 'b64_json') {
      const [w, h] = parseSize(size);
      return { b64_json: services.media.png(w, h, seed).toString('base64'), revised_prompt: revised };
    }
    return { url: `${baseUrl}/media/images/${size}/${seed}.png`, revised_prompt: revised };
  });
  return { kind: 'json', body: { created: services.now(), data } };
};
