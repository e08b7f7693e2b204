// The openai SDK client of docs/client-check.md (an excerpt of this file), as `client-check` runs a user's
// command: the SDK reads OPENAI_BASE_URL and OPENAI_API_KEY; MOCK_CONCURRENCY says how many requests to
// start at once. Two knobs for the tests, left out of the recipe: CLIENT_STREAM=never (never stream) and
// CLIENT_STREAM_TIMEOUT=sdk (the SDK's `timeout` alone, which covers only the wait for the headers).
import OpenAI from 'openai';

/**
 * fetch with a deadline for the response headers and for every silence in the body after them (the first
 * token, and each later one). The SDK's `timeout` covers the headers alone.
 */
function idleTimeoutFetch(ms) {
  if (process.env.CLIENT_STREAM_TIMEOUT === 'sdk') return fetch;
  return async (url, init = {}) => {
    const controller = new AbortController();
    const expire = () => controller.abort(Object.assign(new Error(`no data for ${ms} ms`), { name: 'TimeoutError' }));
    init.signal?.addEventListener('abort', () => controller.abort(init.signal.reason), { once: true });
    let timer = setTimeout(expire, ms);
    let res;
    try {
      res = await fetch(url, { ...init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
    if (!res.body) return res;
    // Unref'd: a body the SDK drops unread (an error it retries) must not keep the program alive.
    const arm = () => (timer = setTimeout(expire, ms)).unref?.();
    arm();
    const body = res.body.pipeThrough(
      new TransformStream({
        transform(chunk, out) {
          clearTimeout(timer);
          arm();
          out.enqueue(chunk);
        },
        flush: () => clearTimeout(timer),
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

const timeout = Number(process.env.CLIENT_TIMEOUT_MS ?? 30_000);
const client = new OpenAI({ timeout, fetch: idleTimeoutFetch(timeout) }); // reads OPENAI_BASE_URL and OPENAI_API_KEY
const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Write one sentence about the sea.' }] };

async function ask() {
  if (process.env.CLIENT_STREAM === 'never')
    return (await client.chat.completions.create(request)).choices[0].message.content;
  const chunks = await client.chat.completions.create({ ...request, stream: true });
  let text = '';
  for await (const chunk of chunks) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

const n = Number(process.env.MOCK_CONCURRENCY ?? 1);
const results = await Promise.allSettled(Array.from({ length: n }, ask));
for (const r of results) console.log(r.status === 'fulfilled' ? r.value : `error: ${r.reason}`);
process.exitCode = results.every((r) => r.status === 'fulfilled') ? 0 : 1;
