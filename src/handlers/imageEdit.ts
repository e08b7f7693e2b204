import { ApiError, ERRORS } from '../contract/errors.js';
import { digest, seedFrom } from '../lib/ids.js';
import { readBase64ImageInfo } from '../media/imageInfo.js';
import { base64Offset } from '../contract/schemas.js';
import type { Handler } from '../pipeline/handler.js';

/** POST /image-provider/image-edit: a real PNG with the input image's width and height, inline as base64. */
export const editImage: Handler = ({ body, raw, services }) => {
  const image = body.image as string;
  // The request schema's format has checked the whole string; only the header is decoded here: the
  // size of a 10 MB image is in its first bytes.
  const info = readBase64ImageInfo(image, base64Offset(image) ?? 0);
  if (!info) {
    throw new ApiError(ERRORS.INVALID_IMAGE, {
      param: 'image',
      message: "Invalid 'image': the data is base64 but not a PNG, JPEG, GIF or WebP image whose size can be read.",
    });
  }
  const { maxWidth, maxHeight } = services.limits.imageEdit;
  if (info.width > maxWidth || info.height > maxHeight || info.width < 1 || info.height < 1) {
    throw new ApiError(ERRORS.INVALID_IMAGE, {
      param: 'image',
      code: 'image_too_large',
      message: `Invalid 'image': ${info.width}x${info.height} is outside the supported size (at most ${maxWidth}x${maxHeight}).`,
    });
  }
  const seed = (body.seed as number | undefined) ?? seedFrom(digest('images.edit', raw));
  const png = services.media.png(info.width, info.height, seed);
  return { kind: 'json', body: { image: png.toString('base64'), finish_reason: 'SUCCESS', seed } };
};
