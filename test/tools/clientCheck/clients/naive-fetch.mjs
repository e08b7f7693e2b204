// A hand-written fetch client with the usual mistakes, for client-check to catch: it retries every
// failure (a 400 and a 401 too) three times at once, ignores retry-after and x-should-retry, and takes a
// stream that stops without [DONE] for a complete answer. It does honour its own timeout.
const base = process.env.OPENAI_BASE_URL;
const key = process.env.OPENAI_API_KEY;
const timeout = Number(process.env.CLIENT_TIMEOUT_MS ?? 30_000);
const stream = ['stream-cut', 'first-token-timeout'].includes(process.env.MOCK_SCENARIO ?? '');

async function once() {
  const signal = AbortSignal.timeout(timeout);
  const res = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Write one sentence about the sea.' }],
      stream,
    }),
    signal,
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  if (!stream) return (await res.json()).choices[0].message.content;
  let text = '';
  const decoder = new TextDecoder();
  try {
    for await (const bytes of res.body) {
      for (const line of decoder.decode(bytes, { stream: true }).split('\n')) {
        if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
        text += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '';
      }
    }
  } catch (err) {
    if (signal.aborted) throw err;
    // "The server closed the connection: that is the end of the answer."
  }
  return text;
}

async function ask() {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once();
    } catch (err) {
      if (attempt === 4) throw err;
    }
  }
}

const n = Number(process.env.MOCK_CONCURRENCY ?? 1);
const results = await Promise.allSettled(Array.from({ length: n }, ask));
for (const r of results) console.log(r.status === 'fulfilled' ? `answer: ${r.value}` : `error: ${r.reason}`);
process.exitCode = results.every((r) => r.status === 'fulfilled') ? 0 : 1;
