import { ApiError, ERRORS } from '../contract/errors.js';
import type { Handler } from '../pipeline/handler.js';
import { parseSize } from '../domain/mediaStore.js';

const SEED_FILE = (ext: string) => new RegExp(`^(\\d{1,10})\\.${ext}$`);

function seedOf(file: string | undefined, ext: string): number {
  const m = SEED_FILE(ext).exec(file ?? '');
  const seed = m ? Number(m[1]) : Number.NaN;
  if (!(seed < 2 ** 32)) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown media file.' });
  return seed;
}

/** GET /media/images/:size/:file: the PNG behind an image URL (no key, like a signed URL). */
export const serveImage: Handler = ({ params, services }) => {
  const sizes = new Set(services.catalogue.ofKind('image').flatMap((m) => m.limits.sizes ?? []));
  if (!sizes.has(params.size ?? '')) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown image size.' });
  const [w, h] = parseSize(params.size!);
  return { kind: 'binary', contentType: 'image/png', body: services.media.png(w, h, seedOf(params.file, 'png')), headers: { 'cache-control': 'public, max-age=3600' } };
};

/** GET /media/videos/:resolution/:duration/:file: the MP4 behind a video task's URL. */
export const serveVideo: Handler = ({ params, services }) => {
  const videos = services.catalogue.ofKind('video');
  const resolutions = new Set(videos.flatMap((m) => m.limits.resolutions ?? []));
  const durations = new Set(videos.flatMap((m) => m.limits.durations ?? []));
  const duration = Number(params.duration);
  if (!resolutions.has(params.resolution ?? '') || !durations.has(duration)) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown video format.' });
  const mp4 = services.media.mp4(params.resolution!, duration, seedOf(params.file, 'mp4'));
  return { kind: 'binary', contentType: 'video/mp4', body: mp4, headers: { 'cache-control': 'public, max-age=3600' } };
};
