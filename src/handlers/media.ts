import { ApiError, ERRORS } from '../contract/errors.js';
import type { Handler } from '../pipeline/handler.js';
import { rangedReply } from '../pipeline/ranged.js';
import { parseSize } from '../domain/mediaStore.js';

const SEED_FILE = (ext: string) => new RegExp(`^(\\d{1,10})\\.${ext}$`);

function seedOf(file: string | undefined, ext: string): number {
  const m = SEED_FILE(ext).exec(file ?? '');
  const seed = m ? Number(m[1]) : Number.NaN;
  if (!(seed < 2 ** 32)) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown media file.' });
  return seed;
}

/** Headers of a media file: it never changes for its path, so clients and proxies may keep it. */
const MEDIA_HEADERS = { 'cache-control': 'public, max-age=3600' };

/** GET /media/images/:size/:file: the PNG behind an image URL (no key, like a signed URL); it takes byte ranges, as a
 * CDN's file does. */
export const serveImage: Handler = ({ params, headers, services }) => {
  const sizes = new Set(services.catalogue.ofKind('image').flatMap((m) => m.limits.sizes ?? []));
  if (!sizes.has(params.size ?? '')) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown image size.' });
  const [w, h] = parseSize(params.size!);
  const png = services.media.png(w, h, seedOf(params.file, 'png'));
  return rangedReply(
    headers,
    { contentType: 'image/png', body: png, headers: MEDIA_HEADERS, name: 'this image' },
    services.limits.messages.maxQuotedChars,
  );
};

/** GET /media/videos/:resolution/:duration/:file: the MP4 behind a video task's URL; it takes byte ranges, so that a
 * player can seek. */
export const serveVideo: Handler = ({ params, headers, services }) => {
  const videos = services.catalogue.ofKind('video');
  const resolutions = new Set(videos.flatMap((m) => m.limits.resolutions ?? []));
  const durations = new Set(videos.flatMap((m) => m.limits.durations ?? []));
  const duration = Number(params.duration);
  if (!resolutions.has(params.resolution ?? '') || !durations.has(duration))
    throw new ApiError(ERRORS.NOT_FOUND, { message: 'Unknown video format.' });
  const mp4 = services.media.mp4(params.resolution!, duration, seedOf(params.file, 'mp4'));
  return rangedReply(
    headers,
    { contentType: 'video/mp4', body: mp4, headers: MEDIA_HEADERS, name: 'this video' },
    services.limits.messages.maxQuotedChars,
  );
};
