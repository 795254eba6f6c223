/** The cartesian plotly bundle ships no typings; we use it through `PlotlyLike` (figures/plotly.ts). */
declare module "plotly.js-cartesian-dist-min" {
  const plotly: unknown;
  export default plotly;
}
