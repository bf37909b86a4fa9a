
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#0969da", "#8250df", "#bf3989", "#1a7f37", "#9a6700", "#cf222e", "#57606a"];
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var records = data.records;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      var text = typeof c === "string" || typeof c === "number";
      node.appendChild(text ? document.createTextNode(String(c)) : c);
    });
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = String(text); }
    return node;
  }
  function set(id, value) { document.getElementById(id).textContent = String(value); }
  function pct(x) { return x === null || x === undefined ? "-" : Math.round(x * 100) + "%"; }
  function fmt(x) { return x === null || x === undefined ? "n/a" : Number(x).toFixed(2); }
  function show(value) { return value === null || value === undefined ? "-" : String(value); }
  function badge(text, kind) { return el("span", {"class": "badge " + (kind || text)}, [String(text)]); }
  function table(target, headers, rows, numeric) {
    var node = document.getElementById(target);
    var head = el("tr", {}, headers.map(function (h, i) {
      return el("th", numeric && numeric[i] ? {"class": "num"} : {}, [h]);
    }));
    node.appendChild(el("thead", {}, [head]));
    var body = el("tbody");
    rows.forEach(function (row) {
      body.appendChild(el("tr", {}, row.map(function (cell, i) {
        return el("td", numeric && numeric[i] ? {"class": "num"} : {}, [cell]);
      })));
    });
    node.appendChild(body);
  }
  function isBlocking(r) {
    return r.blocking === true;  /* computed in Python by the one rule (harness.core.entities) */
  }
  function caption(target, text) {
    document.getElementById(target).appendChild(el("caption", {"class": "muted"}, [text]));
  }
  function headRow(names) {
    return el("thead", {}, [el("tr", {}, names.map(function (h) { return el("th", {}, [h]); }))]);
  }

  // -- counts, computed here from the records --------------------------------------------
  var passed = records.filter(function (r) { return r.status === "passed"; }).length;
  var blocking = records.filter(isBlocking);
  var scenarios = {};
  records.forEach(function (r) { scenarios[r.scenario] = true; });
  set("count-iterations", records.length);
  set("count-scenarios", Object.keys(scenarios).length);
  set("count-passed", passed);
  set("count-failed", records.length - passed);
  set("count-blocking", blocking.length);
  set("pass-rate", records.length ? pct(passed / records.length) : "-");
  ["count-failed", "count-blocking"].forEach(function (id) {
    var card = document.getElementById(id).parentNode;
    card.className = document.getElementById(id).textContent === "0" ? "card ok" : "card bad";
  });
  var verdict = document.getElementById("verdict");
  verdict.textContent = (data.run.exit_code === 0 ? "PASSED" : "FAILED") + ": " + passed + " passed, " +
    (records.length - passed) + " failed of " + records.length + " iteration(s)";
  verdict.className = "banner " + (data.run.exit_code === 0 ? "pass" : "");
  if (data.run.stamp_problem) {
    var stamp = document.getElementById("stamp-problem");
    stamp.hidden = false;
    stamp.textContent = data.run.stamp_problem;
  }
  if (data.blocking_line) {
    var line = document.getElementById("blocking-line");
    line.hidden = false;
    line.textContent = data.blocking_line;
  }

  // -- pass rate by test type (bars) ------------------------------------------------------
  var types = {};
  records.forEach(function (r) {
    var t = types[r.type] || (types[r.type] = {passed: 0, total: 0});
    t.total += 1;
    if (r.status === "passed") { t.passed += 1; }
  });
  var names = Object.keys(types).sort();
  var chart = document.getElementById("chart-types");
  var width = 460, barH = 22, left = 110, top = 6;
  var box = svg("svg", {width: width, height: top * 2 + names.length * (barH + 8),
                        role: "img", "aria-label": "pass rate by test type"});
  names.forEach(function (name, i) {
    var t = types[name], rate = t.total ? t.passed / t.total : 0, y = top + i * (barH + 8);
    var span = width - left - 120;
    box.appendChild(svg("text", {x: left - 6, y: y + 15, "text-anchor": "end"}, name));
    box.appendChild(svg("rect", {x: left, y: y, width: span, height: barH, fill: "#eaeef2", rx: 3}));
    box.appendChild(svg("rect", {x: left, y: y, width: Math.max(0, span * rate), height: barH, rx: 3,
                                 fill: rate === 1 ? "#1a7f37" : (rate >= 0.8 ? "#9a6700" : "#cf222e"),
                                 id: "bar-" + name, "data-passed": t.passed, "data-total": t.total}));
    var label = t.passed + "/" + t.total + " (" + pct(rate) + ")";
    box.appendChild(svg("text", {x: left + span + 6, y: y + 15}, label));
  });
  chart.appendChild(box);

  // -- tables ---------------------------------------------------------------------------
  var cols = ["passed", "rejected", "not_evaluated", "missed", "error"];
  table("table-coverage",
        ["agent", "tenant", "type", "scenarios", "iterations", "passed", "rejected", "not evaluated",
         "missed", "error", "pass rate", "strength"],
        data.coverage.concat([data.total]).map(function (row) {
          return [row.agent, row.tenant, row.type, row.scenarios, row.iterations]
            .concat(cols.map(function (c) { return row[c] || ""; })).concat([pct(row.pass_rate)])
            .concat([row.strength && row.strength.total
                     ? row.strength.caught + "/" + row.strength.total : "-"]);
        }), [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  if (data.metrics.length) {
    table("table-metrics", ["agent", "metric", "value", "n", "target", "gate", "status", "description"],
          data.metrics.map(function (m) {
            return [m.agent, m.name, fmt(m.value), m.numerator + "/" + m.denominator,
                    (m.better === "lower" ? "<= " : ">= ") + fmt(m.target), m.gate ? "yes" : "no",
                    badge(m.status), m.description || ""];
          }), [0, 0, 1, 1, 1, 0, 0, 0]);
  } else {
    caption("table-metrics", "no metric declared");
  }
  var judgeNames = data.judge_groups.names;
  if (judgeNames.length) {
    table("table-judges", ["agent", "tenant", "type"].concat(judgeNames),
          data.judge_groups.rows, [0, 0, 0].concat(judgeNames.map(function () { return 1; })));
  } else {
    caption("table-judges", "no judge declared");
  }
  if (data.rubric.rows.length) {
    table("table-rubric", data.rubric.headers, data.rubric.rows, [0, 0, 0, 0, 1, 1, 1, 1, 1]);
  } else {
    caption("table-rubric", "no rubric item graded");
  }
  var ruleKeys = {};
  data.trend.forEach(function (run) {
    Object.keys(run.rubric || {}).forEach(function (k) { ruleKeys[k] = true; });
  });
  var rules = Object.keys(ruleKeys).sort();
  if (rules.length) {
    table("table-rubric-trend", ["rule"].concat(data.trend.map(function (run) {
            return String(run.started || run.run_id).slice(0, 19); })),
          rules.map(function (k) {
            return [k].concat(data.trend.map(function (run) { return pct((run.rubric || {})[k]); }));
          }), [0].concat(data.trend.map(function () { return 1; })));
  } else {
    caption("table-rubric-trend", "no rubric item graded in the last runs");
  }
  if (data.provenance) {
    var prov = document.getElementById("provenance");
    prov.hidden = false;
    prov.textContent = data.provenance;
  }

  // -- judge score trend over the last runs ---------------------------------------------
  var trend = data.trend;
  var series = {};
  trend.forEach(function (run) {
    Object.keys(run.judges || {}).forEach(function (name) {
      if (run.judges[name] !== null && run.judges[name] !== undefined) { series[name] = true; }
    });
  });
  var judges = Object.keys(series).sort();
  var tbox = document.getElementById("chart-trend");
  if (!judges.length) {
    tbox.appendChild(el("p", {"class": "muted"},
                        ["no judge scores in the last runs (scripted answers are left out of trends)"]));
  } else {
    var W = 520, H = 236, L = 34, R = 110, T = 10, B = 46;
    var plot = svg("svg", {width: W, height: H, role: "img", "aria-label": "judge score trend"});
    var step = trend.length === 1 ? 0 : (W - L - R) / (trend.length - 1);
    var x = function (i) { return trend.length === 1 ? L + (W - L - R) / 2 : L + i * step; };
    var y = function (v) { return T + (5 - v) * (H - T - B) / 4; };
    for (var s = 1; s <= 5; s++) {
      plot.appendChild(svg("line", {x1: L, x2: W - R, y1: y(s), y2: y(s), stroke: "#eaeef2"}));
      plot.appendChild(svg("text", {x: L - 8, y: y(s) + 4, "text-anchor": "end"}, s));
    }
    var every = Math.max(1, Math.ceil(trend.length * 64 / (W - L - R)));  // labels 64px apart
    trend.forEach(function (run, i) {
      var last = trend.length - 1;
      if (i !== last && (i % every !== 0 || last - i < every)) { return; }
      var when = String(run.started || "");
      plot.appendChild(svg("text", {x: x(i), y: H - B + 20, "text-anchor": "middle"}, when.slice(5, 10)));
      plot.appendChild(svg("text", {x: x(i), y: H - B + 33, "text-anchor": "middle"}, when.slice(11, 19)));
    });
    judges.forEach(function (name, j) {
      var color = COLORS[j % COLORS.length], points = [];
      trend.forEach(function (run, i) {
        var v = (run.judges || {})[name];
        if (v === null || v === undefined) { return; }
        points.push(x(i) + "," + y(v));
        var dot = svg("circle", {cx: x(i), cy: y(v), r: 3.5, fill: color});
        dot.appendChild(svg("title", {}, name + " " + fmt(v) + " (" + run.run_id + ")"));
        plot.appendChild(dot);
      });
      if (points.length > 1) {
        plot.appendChild(svg("polyline", {points: points.join(" "), fill: "none", stroke: color,
                                          "stroke-width": 2}));
      }
      plot.appendChild(svg("rect", {x: W - R + 12, y: T + j * 18, width: 10, height: 10, fill: color}));
      plot.appendChild(svg("text", {x: W - R + 28, y: T + j * 18 + 9}, name));
    });
    tbox.appendChild(plot);
  }

  // -- scenarios and the transcript view ------------------------------------------------
  var order = records.slice().sort(function (a, b) {
    var ka = isBlocking(a) ? 0 : (a.status !== "passed" ? 1 : 2);
    var kb = isBlocking(b) ? 0 : (b.status !== "passed" ? 1 : 2);
    var byName = a.scenario < b.scenario ? -1 : (a.scenario > b.scenario ? 1 : 0);
    return ka - kb || byName || a.iteration - b.iteration;
  });
  var tbody = el("tbody");
  var listTable = document.getElementById("scenario-table");
  listTable.appendChild(headRow(["status", "scenario", "type", "test id",
                                 "decision (expected / actual)", "judges"]));
  listTable.appendChild(tbody);
  var rowsByIndex = [];
  order.forEach(function (r, i) {
    var scores = (r.judges || []).map(function (j) {
      return j.score === null ? "-" : String(j.score);
    }).join(" ");
    var names = (r.judges || []).map(function (j) {
      return j.name + " " + (j.score === null ? j.interpretation : j.score);
    });
    var row = el("tr", {"data-index": i, "data-status": r.status}, [
      el("td", {}, [badge(r.status)]), el("td", {}, [r.scenario + "#" + r.iteration]), el("td", {}, [r.type]),
      el("td", {}, [show(r.test_id)]),
      el("td", {}, [show(r.expected_decision) + " / " + show(r.actual_decision)]),
      el("td", {title: names.join(", ")}, [scores])]);
    row.addEventListener("click", function () { select(i); });
    tbody.appendChild(row);
    rowsByIndex.push(row);
  });
  function applyFilter() {
    var text = document.getElementById("filter-text").value.toLowerCase();
    var which = document.getElementById("filter-status").value;
    rowsByIndex.forEach(function (row, i) {
      var r = order[i];
      var haystack = (r.scenario + " " + r.type + " " + (r.test_id || "")).toLowerCase();
      var status = which === "all" || (which === "failing" ? r.status !== "passed" : r.status === "passed");
      var ok = status && (!text || haystack.indexOf(text) !== -1);
      row.hidden = !ok;
    });
  }
  document.getElementById("filter-text").addEventListener("input", applyFilter);
  document.getElementById("filter-status").addEventListener("change", applyFilter);

  function select(i) {
    rowsByIndex.forEach(function (row, k) { row.className = k === i ? "selected" : ""; });
    var r = order[i], view = document.getElementById("transcript");
    while (view.firstChild) { view.removeChild(view.firstChild); }
    view.appendChild(el("h2", {}, [r.scenario + " iteration " + r.iteration + " "]));
    view.firstChild.appendChild(badge(r.status));
    var env = r.environment || {};
    view.appendChild(el("p", {"class": "muted"}, [
      "test " + show(r.test_id) + " - type " + r.type + " - " + show(env.provider) + " / " + show(env.model) +
      " - expected " + show(r.expected_decision) + ", actual " + show(r.actual_decision)]));
    if (r.description) { view.appendChild(el("p", {}, [r.description])); }
    if (r.message) { view.appendChild(el("pre", {"class": "panel"}, [r.message])); }
    view.appendChild(el("h2", {}, ["Transcript"]));
    (r.transcript || []).forEach(function (m) {
      var content = m.content === null || m.content === undefined ? "" : String(m.content);
      var parts = [el("div", {"class": "role"}, [m.role]), el("pre", {}, [content])];
      (m.tool_calls || []).forEach(function (c) {
        parts.push(el("pre", {}, ["-> " + c.name + " " + JSON.stringify(c.arguments)]));
      });
      view.appendChild(el("div", {"class": "msg " + m.role}, parts));
    });
    if (!(r.transcript || []).length) {
      view.appendChild(el("p", {"class": "muted"}, ["no transcript recorded"]));
    }
    view.appendChild(el("h2", {}, ["Verdicts"]));
    var vt = el("table", {}, [headRow(["outcome", "assertion", "reason"])]);
    var vb = el("tbody");
    (r.verdicts || []).forEach(function (v) {
      vb.appendChild(el("tr", {}, [el("td", {}, [badge(v.outcome)]), el("td", {}, [v.assertion]),
                                   el("td", {}, [v.reason])]));
    });
    vt.appendChild(vb);
    view.appendChild(vt);
    if ((r.judges || []).length) {
      view.appendChild(el("h2", {}, ["Judge scores (reported only)"]));
      var jt = el("table", {}, [headRow(["judge", "score", "interpretation", "reason"])]);
      var jb = el("tbody");
      r.judges.forEach(function (j) {
        jb.appendChild(el("tr", {}, [el("td", {}, [j.name + " (" + j.provider + "/" + j.model + ")" +
                                                   (j.scripted ? " scripted" : "")]),
                                     el("td", {"class": "num"}, [show(j.score)]),
                                     el("td", {}, [badge(j.interpretation)]),
                                     el("td", {}, [j.warning ? j.reason + " - " + j.warning : j.reason])]));
      });
      jt.appendChild(jb);
      view.appendChild(jt);
    }
    if ((r.rubric || []).length) {
      view.appendChild(el("h2", {}, ["Rubric (reported only)"]));
      var rt = el("table", {}, [headRow(["rule", "outcome", "reason"])]);
      var rb = el("tbody");
      r.rubric.forEach(function (x) {
        rb.appendChild(el("tr", {}, [el("td", {title: x.rule}, [x.name + (x.scripted ? " scripted" : "")]),
                                     el("td", {}, [badge(x.outcome)]),
                                     el("td", {}, [x.warning ? x.reason + " - " + x.warning : x.reason])]));
      });
      rt.appendChild(rb);
      view.appendChild(rt);
    }
  }
  if (order.length) { select(0); }
  document.body.setAttribute("data-rendered", "ok");
})();
