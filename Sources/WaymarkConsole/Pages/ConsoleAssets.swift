/// The console's stylesheet and script, served from memory (`/assets/…`): plain CSS and a little
/// vanilla JavaScript, no build step and nothing fetched from elsewhere.
enum ConsoleAssets {
    static let css = """
        :root { --ink: #1d2430; --muted: #5b6573; --line: #d6dbe3; --accent: #1f4fd1; --ok: #1b7f3b; --bad: #b42318; }
        * { box-sizing: border-box; }
        body { margin: 0; font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink); background: #f6f7f9; }
        header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.2rem; background: #14213d; color: #fff; }
        header .brand { font-weight: bold; font-size: 1.1rem; }
        header .site { color: #c9d3e6; }
        header nav { display: flex; gap: 1rem; flex: 1; }
        header nav a { color: #dfe6f3; text-decoration: none; padding: .2rem .4rem; border-radius: 4px; }
        header nav a.active, header nav a:hover { background: #2b3d66; color: #fff; }
        header .logout button { background: none; border: 1px solid #6b7a99; color: #dfe6f3; border-radius: 4px; cursor: pointer; }
        main { padding: 1rem 1.2rem 2rem; }
        h1 { font-size: 1.3rem; margin: .2rem 0 1rem; }
        h2 { font-size: 1.1rem; margin: 1.4rem 0 .6rem; }
        .status { color: var(--muted); font-size: .9rem; margin-bottom: .8rem; }
        .floors { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
        .floor { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .5rem; max-width: 100%; overflow: auto; }
        .floor svg { display: block; max-width: 100%; height: auto; }
        .side { min-width: 16rem; }
        .charts { display: flex; flex-wrap: wrap; gap: 1rem; margin: .4rem 0 1rem; }
        svg.chart { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4rem; font-size: 12px; max-width: 100%; height: auto; }
        svg.chart .chart-title { font-weight: 600; }
        svg.chart .bar { fill: #4a78c2; }
        table { border-collapse: collapse; background: #fff; font-size: .9rem; }
        th, td { border: 1px solid var(--line); padding: .3rem .55rem; text-align: left; }
        th { background: #eef1f6; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        td.empty { color: var(--muted); font-style: italic; }
        .badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: .8rem; color: #fff; background: var(--muted); }
        .badge.online { background: var(--ok); }
        .badge.offline { background: var(--bad); }
        form.inline { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
        form.inline label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
        input, select, button { font: inherit; padding: .3rem .5rem; }
        .login { max-width: 22rem; margin: 3rem auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1.2rem 1.5rem; }
        .login form { display: flex; flex-direction: column; gap: .6rem; }
        .error { color: var(--bad); }
        a.button { display: inline-block; padding: .3rem .7rem; background: var(--accent); color: #fff; border-radius: 4px; text-decoration: none; }
        """

    static let js = """
        (function () {
          "use strict";
          var live = document.querySelector("[data-live]");
          var pathHolder = document.querySelector("[data-path]");
          if (pathHolder) {
            var path = JSON.parse(pathHolder.getAttribute("data-path"));
            path.forEach(function (region) {
              document.querySelectorAll('circle.region[data-region="' + CSS.escape(region) + '"]').forEach(function (c) {
                c.setAttribute("stroke", "#1f4fd1"); c.setAttribute("stroke-width", "5"); c.classList.add("on-path");
              });
            });
          }
          if (!live || !window.EventSource) { return; }
          var updated = document.getElementById("live-updated");
          var source = new EventSource("/live/events");
          source.onmessage = function (event) {
            var state = JSON.parse(event.data);
            document.querySelectorAll("text.region-count[data-region]").forEach(function (t) {
              var n = state.occupancy[t.getAttribute("data-region")] || 0;
              t.textContent = n + " inside";
            });
            document.querySelectorAll("circle.region[data-region]").forEach(function (c) {
              if (c.classList.contains("on-path")) { return; }
              var n = state.occupancy[c.getAttribute("data-region")] || 0;
              c.setAttribute("fill", n > 0 ? "#f03b20" : "#ffeda0");
            });
            document.querySelectorAll("[data-gateway]").forEach(function (b) {
              var g = state.gateways[b.getAttribute("data-gateway")];
              var s = g ? g.state : "unknown";
              b.textContent = s; b.className = "badge " + s;
            });
            var total = document.getElementById("live-devices");
            if (total) { total.textContent = String(state.devices); }
            live.setAttribute("data-version", String(state.version));
            if (updated) { updated.textContent = "updated " + new Date().toLocaleTimeString(); }
          };
          source.onerror = function () { if (updated) { updated.textContent = "reconnecting…"; } };
        })();
        """
}
