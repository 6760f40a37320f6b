-- cosock.trace.html_page: the page cosock.trace.html fills in: its style
-- and script (no network, no external font). The data sits in a
-- <script type="application/json"> element (its "<" written \u003c).
--
-- The layout rule, in CSS pixels (doc/tracing.md, "The layout"): a toolbar
-- 36 px high at the top, a legend 24 px high at the bottom, the canvas
-- between them. In the canvas: task names in the left 180 px; the time axis
-- in the top 22 px; the loop's row at y 22..38; task rows of 16 px from
-- y 40 (row r, counted from the first row in view, at 40 + 16 r). Time t
-- (ns since the trace's start) is at x = 180 + (t - v0) / (v1 - v0) * (W - 190),
-- W the canvas width, [v0, v1] the view: the whole trace at first. A turn
-- fills its row from +2 to +14, a wait or a ready span from +5 to +11.

local M = {}

local STYLE = [==[
html, body { margin: 0; padding: 0; height: 100%; overflow: hidden;
  font: 12px/1.3 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; background: #fff; }
#bar { position: fixed; top: 0; left: 0; right: 0; height: 36px; box-sizing: border-box;
  padding: 6px 8px; background: #eef1f4; border-bottom: 1px solid #c8ced4;
  display: flex; gap: 6px; align-items: center; white-space: nowrap; overflow: hidden; }
#bar button { font: inherit; min-width: 28px; height: 24px; padding: 0 6px; }
#bar input[type=text] { font: inherit; width: 160px; height: 20px; }
#bar label { display: inline-flex; align-items: center; gap: 2px; }
#status { color: #555; overflow: hidden; text-overflow: ellipsis; }
#dropped { display: none; color: #fff; background: #c0392b; padding: 2px 6px; font-weight: bold; border-radius: 3px; }
#view { position: fixed; top: 36px; left: 0; right: 0; bottom: 24px; }
#view canvas { display: block; cursor: grab; }
#legend { position: fixed; left: 0; right: 0; bottom: 0; height: 24px; box-sizing: border-box;
  padding: 4px 8px; background: #f7f8f9; border-top: 1px solid #c8ced4; white-space: nowrap; overflow: hidden; }
#legend span.k { display: inline-block; margin-right: 10px; }
#legend i { display: inline-block; width: 12px; height: 10px; margin-right: 3px; vertical-align: -1px; }
#tip { position: fixed; display: none; pointer-events: none; max-width: 520px; padding: 6px 8px;
  background: #fffff4; border: 1px solid #999; box-shadow: 0 2px 6px rgba(0,0,0,.25);
  white-space: pre-wrap; font: 12px/1.35 ui-monospace, Menlo, Consolas, monospace; z-index: 2; }
]==]

local SCRIPT = [==[
(function () {
"use strict";
var D = JSON.parse(document.getElementById("trace-data").textContent);
var LABEL_W = 180, PAD_R = 10, AXIS_H = 22, LOOP_Y = 22, ROWS_Y = 40, ROW_H = 16;
var COLORS = {
  run: "#1a9850", ready: "#f1c40f",
  recv: "#3b7dd8", send: "#8dc3f2", select: "#8e6bbf", "channel-recv": "#e67e22",
  "channel-send": "#f5b971", sleep: "#b8b8b8", timer: "#8c8c8c", lock: "#c0392b",
  scope: "#a0522d", lookup: "#17a589", predicate: "#d35fb7", signal: "#6c3483",
  ossignal: "#b07cc6", join: "#5d6d7e", yield: "#dfe4e6", other: "#7f8c8d"
};
var SPARE = ["#4d4d00", "#00664d", "#660033", "#334d80"];
var END_COLORS = { returned: "#333333", raised: "#e3001b", cancelled: "#ff7f0e", dropped: "#999999" };
var NOTE_COLOR = "#e60099", POLL_COLOR = "#c9d6e3", TIMER_COLOR = "#555555";
var ARROW_COLOR = "rgba(20,20,20,0.85)", LOOP_ARROW_COLOR = "rgba(70,70,70,0.35)";
var STRIPE = ["#ffffff", "#f3f5f7"];
var CODE_COLOR = [COLORS.run, COLORS.ready];
D.whats.forEach(function (w, i) { CODE_COLOR.push(COLORS[w] || SPARE[i % SPARE.length]); });
var N = D.ids.length, S = D.strs;
function str(i) { return i < 0 ? null : S[i]; }

var canvas = document.createElement("canvas");
document.getElementById("view").appendChild(canvas);
var ctx = canvas.getContext("2d");
var W = 0, H = 0;
var v0 = 0, v1 = Math.max(D.dur, 1000);
var top = 0, shown = [], posOf = new Int32Array(N);
var showArrows = true, showLoopArrows = false;
var tip = document.getElementById("tip");

function X(t) { return LABEL_W + (t - v0) / (v1 - v0) * (W - LABEL_W - PAD_R); }
function T(x) { return v0 + (x - LABEL_W) / (W - LABEL_W - PAD_R) * (v1 - v0); }
function visibleRows() { return Math.max(1, Math.floor((H - ROWS_Y) / ROW_H)); }
function rowCenter(row) {
  var p = posOf[row];
  return p < 0 ? null : ROWS_Y + (p - top) * ROW_H + ROW_H / 2;
}
function fmt(ns) {
  var a = Math.abs(ns);
  if (a < 0.5) return "0";
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 2) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + " \u00b5s";
  return Math.round(ns) + " ns";
}
function sec(ns) { return (ns / 1e9).toFixed(6) + " s"; }
function label(row) { return "#" + D.ids[row] + " " + D.names[row]; }
function labelOfId(id, cause) {
  if (id === 0) return cause === "spawn" ? "the main program" : "the loop";
  for (var r = 0; r < N; r++) if (D.ids[r] === id) return label(r);
  return "#" + id;
}

function applyFilter(q) {
  q = (q || "").toLowerCase();
  shown = [];
  for (var r = 0; r < N; r++) {
    if (!q || label(r).toLowerCase().indexOf(q) >= 0) { posOf[r] = shown.length; shown.push(r); }
    else posOf[r] = -1;
  }
  top = 0;
}
function clampTop() {
  var max = Math.max(0, shown.length - visibleRows());
  if (top > max) top = max;
  if (top < 0) top = 0;
}

// The first span of a row whose end is at or after t (spans are in order
// and do not overlap, so their ends are in order too).
function firstEnding(sp, t) {
  var lo = 0, hi = sp.length / 5;
  while (lo < hi) {
    var mid = (lo + hi) >> 1;
    if (sp[mid * 5] + sp[mid * 5 + 1] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function drawAxis() {
  ctx.fillStyle = "#fafbfc"; ctx.fillRect(0, 0, W, AXIS_H);
  var px = W - LABEL_W - PAD_R, span = v1 - v0;
  var raw = span / Math.max(1, px / 110), p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
  var step = raw / p < 2 ? 2 * p : raw / p < 5 ? 5 * p : 10 * p;
  ctx.fillStyle = "#444"; ctx.strokeStyle = "#d5d9dd"; ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
  ctx.beginPath();
  for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
    var x = Math.round(X(t)) + 0.5;
    ctx.moveTo(x, AXIS_H - 5); ctx.lineTo(x, H);
    ctx.fillText(fmt(t), x + 3, AXIS_H / 2);
  }
  ctx.stroke();
}

function drawSpans(sp, y) {
  var n = sp.length / 5, lastPx = -1e9, lastPri = -1;
  for (var j = firstEnding(sp, v0); j < n; j++) {
    var a = sp[j * 5];
    if (a > v1) break;
    var c = sp[j * 5 + 2], x0 = X(a), x1 = X(a + sp[j * 5 + 1]);
    if (x1 - x0 < 1) {
      // Many spans in one pixel: one mark a pixel, a turn before a wait.
      var pxl = Math.floor(x0), pri = c === 0 ? 2 : c === 1 ? 0 : 1;
      if (pxl === lastPx && pri <= lastPri) continue;
      lastPx = pxl; lastPri = pri; x0 = pxl; x1 = pxl + 1;
    } else lastPx = -1e9;
    ctx.fillStyle = CODE_COLOR[c];
    if (c === 0) ctx.fillRect(x0, y + 2, x1 - x0, ROW_H - 4);
    else ctx.fillRect(x0, y + 5, x1 - x0, ROW_H - 10);
  }
}

function arrow(xa, ya, xb, yb, color, width) {
  ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = width;
  ctx.beginPath(); ctx.moveTo(xa, ya); ctx.lineTo(xb, yb); ctx.stroke();
  var ang = Math.atan2(yb - ya, xb - xa), h = 6;
  ctx.beginPath(); ctx.moveTo(xb, yb);
  ctx.lineTo(xb - h * Math.cos(ang - 0.45), yb - h * Math.sin(ang - 0.45));
  ctx.lineTo(xb - h * Math.cos(ang + 0.45), yb - h * Math.sin(ang + 0.45));
  ctx.closePath(); ctx.fill();
}

var arrowsNote = "";
function drawArrows() {
  arrowsNote = "";
  if (!showArrows) return;
  var wk = D.wakes, list = [];
  for (var k = 0; k < wk.length; k += 7) {
    var from = wk[k + 1], to = wk[k + 2], tt = wk[k + 3], t = wk[k];
    if (tt < 0 || tt < v0 || t > v1) continue;
    if (from < 0 && !showLoopArrows) continue;
    var ya = from < 0 ? LOOP_Y + ROW_H / 2 : rowCenter(from), yb = rowCenter(to);
    if (ya === null || yb === null) continue;
    if ((ya < ROWS_Y && yb < ROWS_Y && from >= 0) || (ya > H && yb > H)) continue;
    list.push(k);
    if (list.length > 4000) { arrowsNote = " \u00b7 arrows hidden: zoom in"; return; }
  }
  ctx.save();
  ctx.beginPath(); ctx.rect(LABEL_W, LOOP_Y, W - LABEL_W, H - LOOP_Y); ctx.clip();
  list.forEach(function (k) {
    var from = wk[k + 1];
    var ya = from < 0 ? LOOP_Y + ROW_H / 2 : rowCenter(from);
    arrow(X(wk[k]), ya, X(wk[k + 3]), rowCenter(wk[k + 2]),
      from < 0 ? LOOP_ARROW_COLOR : ARROW_COLOR, from < 0 ? 1 : 2);
  });
  ctx.restore();
}

function draw() {
  var t0 = performance.now();
  var dpr = window.devicePixelRatio || 1;
  var box = document.getElementById("view");
  W = box.clientWidth; H = box.clientHeight;
  canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
  canvas.style.width = W + "px"; canvas.style.height = H + "px";
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  clampTop();
  ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, W, H);
  drawAxis();
  // The loop's row: polls (the time it slept) and timers fired.
  ctx.save();
  ctx.beginPath(); ctx.rect(LABEL_W, 0, W - LABEL_W - PAD_R + 1, H); ctx.clip();
  ctx.fillStyle = "#f0f3f6"; ctx.fillRect(LABEL_W, LOOP_Y, W, ROW_H);
  var P = D.polls;
  for (var k = 0; k < P.length; k += 3) {
    if (P[k] > v1 || P[k] + P[k + 1] < v0) continue;
    var xa = X(P[k]), xb = Math.max(X(P[k] + P[k + 1]), xa + 1);
    ctx.fillStyle = POLL_COLOR; ctx.fillRect(xa, LOOP_Y + 5, xb - xa, ROW_H - 10);
  }
  var TM = D.timers;
  ctx.fillStyle = TIMER_COLOR;
  for (k = 0; k < TM.length; k += 2) {
    if (TM[k] < v0 || TM[k] > v1) continue;
    ctx.fillRect(Math.round(X(TM[k])) - 1, LOOP_Y + 2, 2, ROW_H - 4);
  }
  // The rows in view.
  var nvis = visibleRows();
  for (var p = top; p < Math.min(shown.length, top + nvis + 1); p++) {
    var r = shown[p], y = ROWS_Y + (p - top) * ROW_H;
    ctx.fillStyle = STRIPE[p % 2]; ctx.fillRect(LABEL_W, y, W, ROW_H);
    drawSpans(D.spans[r], y);
    var e = D.ends[r];
    if (e >= 0 && e >= v0 && e <= v1) {
      ctx.fillStyle = END_COLORS[str(D.hows[r])] || "#333333";
      ctx.fillRect(Math.round(X(e)), y + 1, 2, ROW_H - 2);
    }
  }
  var NT = D.notes;
  ctx.fillStyle = NOTE_COLOR;
  for (k = 0; k < NT.length; k += 4) {
    if (NT[k] < v0 || NT[k] > v1) continue;
    var yy = NT[k + 1] < 0 ? LOOP_Y : (rowCenter(NT[k + 1]) === null ? null : rowCenter(NT[k + 1]) - ROW_H / 2);
    if (yy === null || yy < LOOP_Y) continue;
    var xn = X(NT[k]);
    ctx.beginPath(); ctx.moveTo(xn - 4, yy); ctx.lineTo(xn + 4, yy); ctx.lineTo(xn, yy + 6); ctx.closePath(); ctx.fill();
  }
  ctx.restore();
  drawArrows();
  // The names, over a plain column.
  ctx.fillStyle = "#f7f8f9"; ctx.fillRect(0, AXIS_H, LABEL_W, H);
  ctx.fillStyle = "#c8ced4"; ctx.fillRect(LABEL_W - 1, 0, 1, H);
  ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
  ctx.fillStyle = "#333"; ctx.fillText("loop", 6, LOOP_Y + ROW_H / 2);
  ctx.save(); ctx.beginPath(); ctx.rect(0, ROWS_Y, LABEL_W - 4, H); ctx.clip();
  for (p = top; p < Math.min(shown.length, top + nvis + 1); p++) {
    r = shown[p];
    ctx.fillStyle = D.hows[r] >= 0 && str(D.hows[r]) === "raised" ? "#b00018" : "#222";
    ctx.fillText(label(r), 6, ROWS_Y + (p - top) * ROW_H + ROW_H / 2);
  }
  ctx.restore();
  ctx.fillStyle = "#c8ced4"; ctx.fillRect(0, ROWS_Y - 2, W, 1);
  var ms = performance.now() - t0;
  document.getElementById("status").textContent =
    shown.length + " of " + N + " tasks \u00b7 " + D.events + " events \u00b7 trace " + fmt(D.dur) +
    " \u00b7 view " + fmt(v0) + " \u2013 " + fmt(v1) + " \u00b7 rows " + (shown.length ? top + 1 : 0) + "\u2013" +
    Math.min(shown.length, top + nvis) + arrowsNote;
  document.body.setAttribute("data-rendered", String(++renders));
  document.body.setAttribute("data-draw-ms", ms.toFixed(1));
}
var renders = 0, pending = false;
// One draw a frame; the timeout draws when no frame comes (a hidden tab, a
// headless browser).
function redraw() {
  if (pending) return;
  pending = true;
  function now() { if (pending) { pending = false; draw(); } }
  requestAnimationFrame(now);
  setTimeout(now, 50);
}

function zoom(f, at) {
  if (at === undefined) at = (v0 + v1) / 2;
  var nv0 = at - (at - v0) * f, nv1 = at + (v1 - at) * f;
  if (nv1 - nv0 < 100) return;
  v0 = nv0; v1 = nv1; redraw();
}
function pan(frac) { var d = (v1 - v0) * frac; v0 += d; v1 += d; redraw(); }
function fit() { v0 = 0; v1 = Math.max(D.dur, 1000); top = 0; redraw(); }
function scrollRows(n) { top += n; clampTop(); redraw(); }

// What is under the pointer, as text.
function describe(mx, my) {
  if (my < LOOP_Y) return null;
  if (my < LOOP_Y + ROW_H) {
    if (mx < LABEL_W) return "the loop: its polls (the time it slept waiting for descriptors) and timers fired";
    var t = T(mx), tol = (v1 - v0) / (W - LABEL_W) * 3, P = D.polls;
    for (var k = 0; k < P.length; k += 3)
      if (P[k] - tol <= t && t <= P[k] + P[k + 1] + tol)
        return "poll at " + sec(P[k]) + "\nslept " + fmt(P[k + 1]) + ", " + P[k + 2] + " descriptor(s) ready";
    for (k = 0; k < D.timers.length; k += 2)
      if (Math.abs(D.timers[k] - t) <= tol) return "timers at " + sec(D.timers[k]) + ": " + D.timers[k + 1] + " fired";
    return null;
  }
  if (my < ROWS_Y) return null;
  var p = top + Math.floor((my - ROWS_Y) / ROW_H);
  if (p >= shown.length) return null;
  var r = shown[p], lines = [label(r)];
  var how = str(D.hows[r]), err = str(D.errs[r]);
  if (mx < LABEL_W) {
    lines.push("spawned at " + sec(D.spawn[r]) + " by " + labelOfId(D.parents[r], "spawn") + " at " + D.sites[r]);
    lines.push("turns " + D.turns[r] + ", busy " + fmt(D.busy[r]) + ", waiting " + fmt(D.waited[r]));
    if (D.ends[r] >= 0) lines.push("ended at " + sec(D.ends[r]) + ": " + how + (err ? "\n" + err : ""));
    else lines.push("still alive when the trace ends");
    return lines.join("\n");
  }
  var t = T(mx), tol = (v1 - v0) / (W - LABEL_W) * 2;
  if (D.ends[r] >= 0 && Math.abs(D.ends[r] - t) <= tol * 1.5) {
    lines.push("ended at " + sec(D.ends[r]) + ": " + how);
    if (err) lines.push("error: " + err);
    return lines.join("\n");
  }
  var sp = D.spans[r], j = firstEnding(sp, t - tol), best = -1;
  for (; j < sp.length / 5 && sp[j * 5] <= t + tol; j++) {
    if (best < 0 || sp[j * 5 + 2] === 0) best = j;
    if (sp[j * 5] <= t && t <= sp[j * 5] + sp[j * 5 + 1]) { best = j; break; }
  }
  if (best < 0) return lines.join("\n");
  var a = sp[best * 5], d = sp[best * 5 + 1], c = sp[best * 5 + 2], det = str(sp[best * 5 + 3]), wi = sp[best * 5 + 4];
  var kind = c === 0 ? "running" : c === 1 ? "ready (woken, not yet resumed)" : "waiting on " + D.whats[c - 2] + (det ? " (" + det + ")" : "");
  lines.push(kind);
  lines.push(sec(a) + " \u2192 " + sec(a + d) + "  (" + fmt(d) + ")");
  if (wi >= 0) {
    var w = wi * 7, cause = str(D.wakes[w + 4]), wd = str(D.wakes[w + 5]);
    var who = labelOfId(D.wakes[w + 6], cause);
    var text = cause + " by " + who + (wd ? " (" + wd + ")" : "") + " at " + sec(D.wakes[w]);
    lines.push((c === 0 ? "woken: " : c === 1 ? "woken: " : "ended by: ") + text);
  } else if (c >= 2 && a + d >= D.dur) lines.push("still waiting when the trace ends");
  if (how === "raised" && D.ends[r] >= 0) lines.push("the task raised: " + err);
  return lines.join("\n");
}

var drag = null;
canvas.addEventListener("mousedown", function (ev) {
  drag = { x: ev.clientX, y: ev.clientY, v0: v0, v1: v1, top: top };
  canvas.style.cursor = "grabbing";
});
window.addEventListener("mouseup", function () { drag = null; canvas.style.cursor = "grab"; });
window.addEventListener("mousemove", function (ev) {
  var rect = canvas.getBoundingClientRect(), mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
  if (drag) {
    var dt = (ev.clientX - drag.x) / (W - LABEL_W - PAD_R) * (drag.v1 - drag.v0);
    v0 = drag.v0 - dt; v1 = drag.v1 - dt;
    top = drag.top - Math.round((ev.clientY - drag.y) / ROW_H); clampTop();
    tip.style.display = "none"; redraw(); return;
  }
  var text = (mx >= 0 && my >= 0 && mx < W && my < H) ? describe(mx, my) : null;
  if (!text) { tip.style.display = "none"; return; }
  tip.textContent = text; tip.style.display = "block";
  var x = ev.clientX + 14, y = ev.clientY + 14;
  if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, ev.clientX - tip.offsetWidth - 8);
  if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, ev.clientY - tip.offsetHeight - 8);
  tip.style.left = x + "px"; tip.style.top = y + "px";
});
canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
canvas.addEventListener("wheel", function (ev) {
  ev.preventDefault();
  if (ev.shiftKey) { scrollRows(ev.deltaY > 0 ? 3 : -3); return; }
  var rect = canvas.getBoundingClientRect(), mx = ev.clientX - rect.left;
  zoom(Math.exp(ev.deltaY * 0.002), mx > LABEL_W ? T(mx) : undefined);
}, { passive: false });
function on(id, f) { document.getElementById(id).addEventListener("click", f); }
on("zin", function () { zoom(0.5); });
on("zout", function () { zoom(2); });
on("fit", fit);
on("left", function () { pan(-0.25); });
on("right", function () { pan(0.25); });
on("up", function () { scrollRows(-visibleRows()); });
on("down", function () { scrollRows(visibleRows()); });
var filter = document.getElementById("filter");
filter.addEventListener("input", function () { applyFilter(filter.value); redraw(); });
var arrowsBox = document.getElementById("arrows"), loopBox = document.getElementById("loopwakes");
arrowsBox.addEventListener("change", function () { showArrows = arrowsBox.checked; redraw(); });
loopBox.addEventListener("change", function () { showLoopArrows = loopBox.checked; redraw(); });
window.addEventListener("keydown", function (ev) {
  if (ev.target === filter) return;
  var k = ev.key;
  if (k === "+" || k === "=") zoom(0.5); else if (k === "-") zoom(2); else if (k === "0") fit();
  else if (k === "ArrowLeft") pan(-0.25); else if (k === "ArrowRight") pan(0.25);
  else if (k === "ArrowUp") scrollRows(-1); else if (k === "ArrowDown") scrollRows(1);
  else if (k === "PageUp") scrollRows(-visibleRows()); else if (k === "PageDown") scrollRows(visibleRows());
  else return;
  ev.preventDefault();
});
window.addEventListener("resize", redraw);

// The legend.
var legend = document.getElementById("legend");
function key(color, text, title) {
  var s = document.createElement("span"), i = document.createElement("i");
  s.className = "k"; i.style.background = color; s.appendChild(i);
  s.appendChild(document.createTextNode(text)); if (title) s.title = title;
  legend.appendChild(s);
}
key(COLORS.run, "running", "a turn of the task");
key(COLORS.ready, "ready", "woken, waiting for its turn");
var used = {};
D.spans.forEach(function (sp) { for (var j = 2; j < sp.length; j += 5) used[sp[j]] = true; });
D.whats.forEach(function (w, i) { if (used[i + 2]) key(CODE_COLOR[i + 2], "wait " + w); });
key("#141414", "wake (waker's turn \u2192 woken turn)");
key(END_COLORS.returned, "returned"); key(END_COLORS.raised, "raised"); key(END_COLORS.cancelled, "cancelled");
key(NOTE_COLOR, "note"); key(POLL_COLOR, "poll (loop asleep)");

if (D.dropped > 0) {
  var dr = document.getElementById("dropped");
  dr.textContent = D.dropped + " events dropped: the buffer was full, the trace ends early";
  dr.style.display = "inline-block";
}

// The address's #filter=...&arrows=0&loopwakes=1&view=A,B (seconds)&top=N&tip=T,ROW.
var h = {};
location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
  var i = kv.indexOf("=");
  if (i > 0) h[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
});
if (h.filter) filter.value = h.filter;
applyFilter(filter.value);
if (h.arrows === "0") { showArrows = false; arrowsBox.checked = false; }
if (h.loopwakes === "1") { showLoopArrows = true; loopBox.checked = true; }
if (h.view) {
  var vv = h.view.split(",").map(Number);
  if (vv.length === 2 && vv[1] > vv[0]) { v0 = vv[0] * 1e9; v1 = vv[1] * 1e9; }
}
if (h.top) top = Number(h.top) || 0;
draw();
// #tip=SECONDS,ROW shows the details at that place, as a hover would (for
// pictures of the page).
if (h.tip) {
  var tp = h.tip.split(",").map(Number), tx = X(tp[0] * 1e9), ty = ROWS_Y + (tp[1] - top) * ROW_H + ROW_H / 2;
  var tt = describe(tx, ty);
  if (tt) {
    tip.textContent = tt; tip.style.display = "block";
    tip.style.left = Math.round(tx + 12) + "px"; tip.style.top = Math.round(ty + 36 + 12) + "px";
  }
}
})();
]==]

local BODY = [==[
<div id="bar">
<button id="zout" title="zoom out (-)">&minus;</button><button id="zin" title="zoom in (+)">+</button>
<button id="fit" title="the whole trace (0)">fit</button>
<button id="left" title="earlier (&larr;)">&#9664;</button><button id="right" title="later (&rarr;)">&#9654;</button>
<button id="up" title="rows above (PageUp)">&#9650;</button><button id="down" title="rows below (PageDown)">&#9660;</button>
<input id="filter" type="text" placeholder="filter tasks by name" title="shows the tasks whose '#id name' contains this">
<label title="arrows from the waker's turn to the woken task's next turn"><input id="arrows" type="checkbox" checked>wakes</label>
<label title="arrows from the loop (readiness, timers)"><input id="loopwakes" type="checkbox">loop wakes</label>
<span id="dropped"></span>
<span id="status"></span>
</div>
<div id="view"></div>
<div id="legend"></div>
<div id="tip"></div>
]==]

function M.html(title, data_json)
  return table.concat({
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<title>", title, "</title>\n<style>\n", STYLE, "</style>\n</head>\n<body>\n",
    BODY,
    "<script type=\"application/json\" id=\"trace-data\">\n", data_json, "\n</script>\n",
    "<script>\n", SCRIPT, "</script>\n</body>\n</html>\n",
  })
end

return M
