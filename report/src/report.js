// Timeline zoom: re-places every element that carries data-t (seconds) / data-d (duration).
// The page reads fine without this script: the static layout is "fit to width".
(function () {
  var svg = document.getElementById('tl-plot');
  var range = document.getElementById('tl-zoom');
  if (!svg || !range) return;
  document.documentElement.className += ' js'; // shows the zoom control, which needs this script
  var NS = 'http://www.w3.org/2000/svg';
  var end = +svg.getAttribute('data-end'), x0 = +svg.getAttribute('data-x0'), pad = +svg.getAttribute('data-pad');
  var h = +svg.getAttribute('height'), scroller = svg.parentNode, label = document.getElementById('tl-zoom-val');
  var els = Array.prototype.slice.call(svg.querySelectorAll('[data-t]'));
  var steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600];
  var base = +svg.getAttribute('data-pps');
  function fit() { return Math.max((scroller.clientWidth - x0 - pad) / end, 1e-6); }
  function grid(pps) {
    var g = document.getElementById('tl-grid');
    while (g.firstChild) g.removeChild(g.firstChild);
    var step = steps.filter(function (s) { return s * pps >= 90; })[0] || 3600;
    for (var k = 0; k <= end + 1e-9; k += step) {
      var x = x0 + k * pps, txt = step < 1 ? k.toFixed(1) + ' s' : Math.round(k) + ' s';
      var l = document.createElementNS(NS, 'line');
      l.setAttribute('x1', x); l.setAttribute('x2', x); l.setAttribute('y1', 20); l.setAttribute('y2', h - 20); l.setAttribute('stroke', '#e2e8f0');
      g.appendChild(l);
      [16, h - 6].forEach(function (y) {
        var t = document.createElementNS(NS, 'text');
        t.setAttribute('x', x + 3); t.setAttribute('y', y); t.setAttribute('font-size', 11); t.setAttribute('fill', '#64748b');
        t.textContent = txt; g.appendChild(t);
      });
    }
  }
  function layout(zoom, keepCentre) {
    var centre = (scroller.scrollLeft + scroller.clientWidth / 2) / svg.getAttribute('width');
    var pps = base * zoom;
    svg.setAttribute('width', x0 + end * pps + pad);
    els.forEach(function (el) {
      var x = x0 + (+el.getAttribute('data-t')) * pps, d = el.getAttribute('data-d'), tag = el.tagName;
      if (d !== null) { el.setAttribute('x', x); el.setAttribute('width', Math.max(+d * pps, 1.5)); }
      else if (tag === 'line') { el.setAttribute('x1', x); el.setAttribute('x2', x); }
      else if (tag === 'text') {
        el.setAttribute('x', x + (+(el.getAttribute('data-dx') || 0)));
        var w = el.getAttribute('data-w');
        if (w !== null) {
          var px = +w * pps, max = el.getAttribute('data-max');
          el.setAttribute('display', (px >= +el.getAttribute('data-min') && (max === null || px < +max)) ? 'inline' : 'none');
        }
      } else { el.setAttribute('transform', 'translate(' + x + ',' + el.getAttribute('data-y') + ')'); }
    });
    grid(pps);
    if (label) label.textContent = zoom.toFixed(zoom < 10 ? 1 : 0) + '×';
    if (keepCentre) scroller.scrollLeft = centre * svg.getAttribute('width') - scroller.clientWidth / 2;
  }
  function zoomOf() { return Math.pow(2, range.value / 10); }
  base = fit();
  layout(zoomOf(), false);
  range.addEventListener('input', function () { layout(zoomOf(), true); });
  document.getElementById('tl-fit').addEventListener('click', function () { range.value = 0; base = fit(); layout(1, false); });
  // Following a link to an anomaly flag: zoom in around it so its evidence is legible.
  function focusHash() {
    var m = /^#tl-anomaly-\d+$/.test(location.hash) && document.getElementById(location.hash.slice(1));
    if (!m) return;
    if (range.value < 30) { range.value = 30; layout(zoomOf(), false); }
    var x = +m.getAttribute('data-t') * base * zoomOf() + x0;
    scroller.scrollLeft = x - scroller.clientWidth / 2;
    document.getElementById('timeline').scrollIntoView();
  }
  window.addEventListener('hashchange', focusHash);
  focusHash();
})();
