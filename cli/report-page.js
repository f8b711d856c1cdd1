// The report page's script, inlined by cli/report.mjs: a squarified treemap of token cost and a
// small BM25 search over the catalog. No network, no libraries.
/* global document */
;(function () {
  'use strict'
  var data = JSON.parse(document.getElementById('toolreg-data').textContent)
  // Tools come as rows (see cli/report.mjs); named fields from here on.
  data.tools = data.tools.map(function (r) { return { s: r[0], t: r[1], d: r[2], k: r[3], x: r[4] === 1 } })

  // Squarified treemap (Bruls, Huizing, van Wijk 2000): rows along the shorter side, each row
  // kept while it improves the worst aspect ratio. `items` carry `value`; returns rects.
  function squarify(items, x, y, w, h) {
    var total = items.reduce(function (s, it) { return s + it.value }, 0)
    var out = []
    if (total <= 0 || w <= 0 || h <= 0) return out
    var scale = (w * h) / total
    var rest = items.filter(function (it) { return it.value > 0 }).sort(function (a, b) { return b.value - a.value })
    var row = []
    function worst(r, side) {
      var sum = 0, max = 0, min = Infinity
      r.forEach(function (it) { var a = it.value * scale; sum += a; max = Math.max(max, a); min = Math.min(min, a) })
      var s2 = side * side, sum2 = sum * sum
      return Math.max((s2 * max) / sum2, sum2 / (s2 * min))
    }
    function layout(r) {
      var area = r.reduce(function (s, it) { return s + it.value * scale }, 0)
      if (w >= h) {
        var rw = area / h, cy = y
        r.forEach(function (it) { var ih = (it.value * scale) / rw; out.push({ item: it, x: x, y: cy, w: rw, h: ih }); cy += ih })
        x += rw; w -= rw
      } else {
        var rh = area / w, cx = x
        r.forEach(function (it) { var iw = (it.value * scale) / rh; out.push({ item: it, x: cx, y: y, w: iw, h: rh }); cx += iw })
        y += rh; h -= rh
      }
    }
    while (rest.length) {
      var side = Math.min(w, h)
      var next = rest[0]
      if (row.length === 0 || worst(row.concat([next]), side) <= worst(row, side)) {
        row.push(rest.shift())
      } else {
        layout(row)
        row = []
      }
    }
    if (row.length) layout(row)
    return out
  }

  var SVG = 'http://www.w3.org/2000/svg'
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name)
    for (var k in attrs) node.setAttribute(k, attrs[k])
    if (parent) parent.appendChild(node)
    return node
  }
  function drawTreemap() {
    var svg = document.getElementById('treemap')
    if (!svg) return // no tools: the page says why instead
    var W = 1200, H = 640
    var servers = data.servers.map(function (s, i) { return { value: s.tokens, index: i, server: s } })
    var toolsByServer = {}
    data.tools.forEach(function (t) { (toolsByServer[t.s] = toolsByServer[t.s] || []).push({ value: t.k, tool: t }) })
    squarify(servers, 0, 0, W, H).forEach(function (cell) {
      var s = cell.item.server
      var g = el('g', {}, svg)
      var live = s.kind === 'mcp'
      var rect = el('rect', {
        class: 'server' + (live ? ' live' : ''), x: cell.x, y: cell.y, width: cell.w, height: cell.h,
        'data-server': s.id, 'data-tokens': s.tokens, fill: s.color,
      }, g)
      el('title', {}, rect).textContent = s.name + ' (' + s.id + '): ' + s.tokens.toLocaleString('en-US') + ' tokens, ' + s.toolCount + ' tools'
      // A cell tall enough gets a strip for the server's name above its tools, so no tool
      // label sits under it.
      var named = cell.w > 60 && cell.h > 40
      var top = named ? 16 : 1
      if (cell.w > 6 && cell.h > 6) {
        squarify(toolsByServer[cell.item.index] || [], cell.x + 1, cell.y + top, cell.w - 2, cell.h - top - 1).forEach(function (tc) {
          var t = tc.item.tool
          var r = el('rect', { class: 'tool' + (t.x ? ' deferred' : ''), x: tc.x, y: tc.y, width: tc.w, height: tc.h }, g)
          el('title', {}, r).textContent = t.t + ' — ' + t.k.toLocaleString('en-US') + ' tokens' + (t.x ? ' (deferred)' : ' (inline)')
          if (tc.w > 40 && tc.h > 14) {
            var name = el('text', { x: tc.x + 3, y: tc.y + 11, class: 'tool-label', 'data-tool': t.t }, g)
            name.textContent = t.t.slice(0, Math.floor((tc.w - 4) / 6))
          }
        })
      }
      if (named) {
        var label = el('text', { x: cell.x + 4, y: cell.y + 12, class: 'label' }, g)
        label.textContent = s.name.slice(0, Math.floor(cell.w / 7))
      }
    })
  }

  // BM25 over each tool's name words, server name and description (k1 1.2, b 0.75).
  function words(text) {
    var spaced = String(text || '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
    var out = spaced.match(/[\p{L}\p{N}]+/gu) || []
    var grams = []
    out.forEach(function (w) {
      if (/[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(w) && w.length > 1) {
        for (var i = 0; i + 1 < w.length; i++) grams.push(w.slice(i, i + 2))
      } else grams.push(w)
    })
    return grams
  }
  var docs = data.tools.map(function (t) { return words(t.t + ' ' + t.t + ' ' + data.servers[t.s].name + ' ' + t.d) })
  var df = {}, avg = 0
  docs.forEach(function (d) { avg += d.length; var seen = {}; d.forEach(function (w) { if (!seen[w]) { seen[w] = 1; df[w] = (df[w] || 0) + 1 } }) })
  avg /= Math.max(1, docs.length)
  function search(query, k) {
    var q = words(query)
    var scores = []
    docs.forEach(function (d, i) {
      var score = 0
      q.forEach(function (w) {
        var tf = 0
        for (var j = 0; j < d.length; j++) if (d[j] === w) tf++
        if (!tf) return
        var idf = Math.log(1 + (docs.length - df[w] + 0.5) / (df[w] + 0.5))
        score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avg))
      })
      if (score > 0) scores.push([score, i])
    })
    return scores.sort(function (a, b) { return b[0] - a[0] }).slice(0, k)
  }

  function drawSearch() {
    var box = document.getElementById('search')
    var list = document.getElementById('results')
    box.addEventListener('input', function () {
      list.textContent = ''
      if (!box.value.trim()) return
      search(box.value, 10).forEach(function (hit) {
        var t = data.tools[hit[1]]
        var li = document.createElement('li')
        li.setAttribute('data-tool', t.t)
        var b = document.createElement('b')
        b.textContent = t.t
        li.appendChild(b)
        var d = t.d.length > 160 ? t.d.slice(0, 159) + '…' : t.d
        li.appendChild(document.createTextNode(' — ' + data.servers[t.s].name + ' · ' + t.k.toLocaleString('en-US') + ' tokens · ' + d))
        list.appendChild(li)
      })
    })
  }

  drawTreemap()
  drawSearch()
})()
