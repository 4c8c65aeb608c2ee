// player.js — play / pause / step / scrub over a drawn scene's simulated time.
// Guarantees: one clock per page; `load(drawing)` puts the clock at the end of the new story (the whole story
// shown) and stops playing; every change of time calls `onTime(t)` once; a whole story plays in 4–12 s of real
// time whatever its simulated length; `step(±1)` moves to the next / previous time at which something happens.

export function makePlayer({ play, back, forward, scrubber, clock, onTime, words }) {
  let drawing = null;
  let now = 0;
  let playing = false;
  let frame = 0;
  let last = 0;

  const format = (t) => `${words().time_now} ${t.toFixed(2)} / ${(drawing ? drawing.end : 0).toFixed(2)}`;

  function show(t) {
    if (!drawing) return;
    now = Math.min(Math.max(t, 0), drawing.end);
    scrubber.value = String(now);
    clock.textContent = format(now);
    onTime(now);
  }

  function label() {
    const w = words();
    play.classList.toggle("playing", playing);
    play.setAttribute("aria-label", playing ? w.pause : w.play);
    play.title = `${playing ? w.pause : w.play} (Space)`;
    back.setAttribute("aria-label", w.step_back);
    back.title = `${w.step_back} (←)`;
    forward.setAttribute("aria-label", w.step_forward);
    forward.title = `${w.step_forward} (→)`;
    scrubber.setAttribute("aria-label", w.scrubber);
  }

  function tick(stamp) {
    if (!playing || !drawing) return;
    const duration = Math.min(12, Math.max(4, drawing.end * 1.5));
    const rate = drawing.end / duration;
    const dt = last ? (stamp - last) / 1000 : 0;
    last = stamp;
    const t = now + dt * rate;
    if (t >= drawing.end) {
      show(drawing.end);
      pause();
      return;
    }
    show(t);
    frame = requestAnimationFrame(tick);
  }

  function start() {
    if (!drawing || playing) return;
    if (now >= drawing.end) show(0);
    playing = true;
    last = 0;
    label();
    frame = requestAnimationFrame(tick);
  }

  function pause() {
    playing = false;
    cancelAnimationFrame(frame);
    label();
  }

  function step(direction) {
    if (!drawing) return;
    pause();
    const times = drawing.times;
    const eps = 1e-9;
    const next = direction > 0 ? times.find((t) => t > now + eps) : [...times].reverse().find((t) => t < now - eps);
    show(next ?? (direction > 0 ? drawing.end : 0));
  }

  play.addEventListener("click", () => (playing ? pause() : start()));
  back.addEventListener("click", () => step(-1));
  forward.addEventListener("click", () => step(1));
  scrubber.addEventListener("input", () => { pause(); show(Number(scrubber.value)); });

  return {
    load(next, keepTime = false) {
      pause();
      drawing = next;
      scrubber.max = String(next.end || 0);
      show(keepTime ? now : next.end);
      label();
    },
    toggle: () => (playing ? pause() : start()),
    step,
    pause,
    relabel: () => { label(); if (drawing) clock.textContent = format(now); },
    get now() { return now; },
  };
}
