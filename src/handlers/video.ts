import { ApiError, ERRORS } from '../contract/errors.js';
import { digest, idFrom, seedFrom } from '../lib/ids.js';
import type { Handler } from '../pipeline/handler.js';
import type { RequestPlan } from '../pipeline/handler.js';
import type { Services, VideoTask } from '../domain/services.js';
import type { VideoTiming } from '../domain/state/store.js';
import type { Reply } from '../contract/reply.js';

// With video.progress on, each poll moves the task one step: a virtual clock, not wall time.
const PROGRESS = ['queued', 'generating', 'completed'] as const;

/** The task's status: by wall time under a latency profile, else by polls (video.progress), else completed. */
function statusOf(task: VideoTask, progress: boolean, now: number): (typeof PROGRESS)[number] {
  const timing = task.timing;
  if (timing) {
    const elapsed = now - timing.startMs;
    return elapsed >= timing.durationMs ? 'completed' : elapsed >= timing.durationMs / 10 ? 'generating' : 'queued';
  }
  return progress ? PROGRESS[Math.min(task.polls, PROGRESS.length - 1)]! : 'completed';
}

function view(task: VideoTask, services: Services): Record<string, unknown> {
  const status = statusOf(task, services.config.video.progress, services.clock.now());
  return { ...task.body, status, video: status === 'completed' ? task.body.video : null };
}

/** Under a latency profile, the task's generation time drawn from the model's `duration`; otherwise none. */
function timingOf(services: Services, chosen: RequestPlan['timing']): VideoTiming | undefined {
  if (!chosen) return undefined;
  const durationMs = services.latency.draws().draw(chosen.profile.duration ?? 0);
  return { startMs: services.clock.now(), durationMs };
}

/** POST /video-provider/generate: a task, completed at once by default, whose URL serves a real MP4. */
export const generateVideo: Handler = ({ body, raw, baseUrl, plan, services }) => {
  const model = plan.model!; // checked once, before the handler (pipeline/plan.ts)
  const { video } = services.limits;
  const duration = (body.duration as number | undefined) ?? video.defaultDuration;
  const resolution = (body.resolution as string | undefined) ?? video.defaultResolution;
  const d = digest('video.generate', raw);
  const seed = typeof body.seed === 'number' ? Math.abs(Math.trunc(body.seed)) % 2 ** 32 : seedFrom(d);
  const id = idFrom(d, 'vid_', 24);
  const task: VideoTask = {
    polls: 0,
    body: {
      id,
      status: 'completed',
      model: model.id,
      mode: body.mode,
      created_at: services.now(),
      video: {
        url: `${baseUrl}/media/videos/${resolution}/${duration}/${seed}.mp4`,
        content_type: 'video/mp4',
        duration,
        resolution,
        seed,
      },
      error: null,
    },
  };
  const timing = timingOf(services, plan.timing);
  if (timing) task.timing = timing;
  const stored = services.state.putVideo(id, task);
  const reply: Reply = { kind: 'json', body: view(task, services) };
  return stored instanceof Promise ? stored.then(() => reply) : reply;
};

/** GET /video-provider/generate/:id: the task's current state (an extension for polling clients). */
export const getVideo: Handler = ({ params, services }) => {
  const id = params.id ?? '';
  const answer = (task: VideoTask | undefined): Reply => {
    if (!task)
      throw new ApiError(ERRORS.NOT_FOUND, {
        param: 'id',
        code: 'task_not_found',
        message: `No video task with id '${id.slice(0, services.limits.messages.maxQuotedChars)}'.`,
      });
    return { kind: 'json', body: view(task, services) };
  };
  // The poll is counted by the state (atomically in Redis, where several instances may serve one task).
  const task = services.state.pollVideo(id);
  return task instanceof Promise ? task.then(answer) : answer(task);
};
