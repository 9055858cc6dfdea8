/**
 * @module
 * Line charts as hand-written SVG: smaller than a charting dependency, and renders anywhere.
 */

export interface Series {
  name: string;
  color: string;
  /** Drawn dashed: a second series of the same colour (a system's other transport). */
  dashed?: boolean;
  points: Array<[number, number]>;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
  logY?: boolean;
}

const WIDTH = 640;
const HEIGHT = 360;
const MARGIN = { left: 72, right: 150, top: 36, bottom: 52 };

interface Scale {
  at(v: number): number;
  ticks: number[];
}

function linearScale(min: number, max: number, from: number, to: number): Scale {
  const top = niceCeil(max);
  const step = niceCeil(top / 5);
  const ticks: number[] = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(t);
  const hi = ticks.at(-1) as number;
  return { at: (v) => from + ((v - min) / (hi - min || 1)) * (to - from), ticks };
}

function logScale(min: number, max: number, from: number, to: number): Scale {
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max));
  const ticks: number[] = [];
  for (let decade = lo; decade <= hi; decade *= 10) {
    for (const m of [1, 2, 5]) if (decade * m >= lo && decade * m <= hi) ticks.push(decade * m);
  }
  const span = Math.log10(hi) - Math.log10(lo) || 1;
  return { at: (v) => from + ((Math.log10(v) - Math.log10(lo)) / span) * (to - from), ticks };
}

/** The smallest 1, 2 or 5 × 10^k at or above `v`. */
function niceCeil(v: number): number {
  if (v <= 0) return 1;
  const decade = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * decade >= v) as number) * decade;
}

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const format = (v: number) => (v >= 1e6 ? `${round(v / 1e6)}M` : v >= 1e3 ? `${round(v / 1e3)}k` : String(round(v)));
const round = (v: number) => Number(v.toPrecision(3));

export function lineChart(chart: Chart): string {
  const points = chart.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!chart.logY || y > 0));
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const plot = { x0: MARGIN.left, x1: WIDTH - MARGIN.right, y0: HEIGHT - MARGIN.bottom, y1: MARGIN.top };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(chart.title)}</text>`,
  ];
  if (points.length === 0) {
    out.push(`<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no data</text>`, "</svg>");
    return out.join("\n");
  }
  const x = chart.logX ? logScale(Math.min(...xs), Math.max(...xs), plot.x0, plot.x1) : linearScale(0, Math.max(...xs), plot.x0, plot.x1);
  const y = chart.logY ? logScale(Math.min(...ys), Math.max(...ys), plot.y0, plot.y1) : linearScale(0, Math.max(...ys), plot.y0, plot.y1);
  for (const t of y.ticks) {
    const py = y.at(t).toFixed(1);
    out.push(`<line x1="${plot.x0}" x2="${plot.x1}" y1="${py}" y2="${py}" stroke="#e5e5e5"/>`, `<text x="${plot.x0 - 6}" y="${py}" text-anchor="end" dominant-baseline="middle">${format(t)}</text>`);
  }
  for (const t of x.ticks) {
    const px = x.at(t).toFixed(1);
    out.push(`<line x1="${px}" x2="${px}" y1="${plot.y0}" y2="${plot.y1}" stroke="#f0f0f0"/>`, `<text x="${px}" y="${plot.y0 + 16}" text-anchor="middle">${format(t)}</text>`);
  }
  out.push(
    `<line x1="${plot.x0}" x2="${plot.x1}" y1="${plot.y0}" y2="${plot.y0}" stroke="#333"/>`,
    `<line x1="${plot.x0}" x2="${plot.x0}" y1="${plot.y0}" y2="${plot.y1}" stroke="#333"/>`,
    `<text x="${(plot.x0 + plot.x1) / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${(plot.y0 + plot.y1) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, i) => {
    const visible = series.points.filter(([px, py]) => Number.isFinite(px) && Number.isFinite(py) && (!chart.logY || py > 0)).sort((a, b) => a[0] - b[0]);
    const coords = visible.map(([px, py]) => `${x.at(px).toFixed(1)},${y.at(py).toFixed(1)}`);
    const dash = series.dashed ? ` stroke-dasharray="6 4"` : "";
    if (coords.length > 1) out.push(`<polyline points="${coords.join(" ")}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    for (const c of coords) {
      const [cx, cy] = c.split(",");
      out.push(`<circle cx="${cx}" cy="${cy}" r="3.5" fill="${series.color}"/>`);
    }
    const ly = MARGIN.top + 14 + i * 20;
    out.push(
      `<line x1="${plot.x1 + 16}" x2="${plot.x1 + 36}" y1="${ly}" y2="${ly}" stroke="${series.color}" stroke-width="2"${dash}/>`,
      `<text x="${plot.x1 + 42}" y="${ly}" dominant-baseline="middle">${escapeXml(series.name)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n");
}
