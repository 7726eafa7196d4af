// The report page's behaviour: draws the grid from the embedded run, filters rows, and shows a
// cell's reason and diff. Plain browser JavaScript, no modules, so the page works from file://.
(() => {
  var data = JSON.parse(document.getElementById('matrix-data').textContent);
  var run = data.run;
  var ui = data.ui;
  var columns = run.columns;
  var casesById = new Map(run.cases.map((c) => [c.id, c]));
  var cells = new Map(run.cells.map((c) => [`${c.case}\u0000${c.column}`, c]));
  var summaries = new Map(run.summary.columns.map((s) => [s.column, s]));
  var columnsById = new Map(columns.map((c) => [c.id, c]));

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach((key) => {
      var value = attrs[key];
      if (value === undefined || value === null || value === false) return;
      if (key === 'text') node.textContent = value;
      else if (key === 'className') node.className = value;
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? '' : String(value));
    });
    (children || []).forEach((child) => {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function cellHash(caseId, columnId) {
    return `#cell=${encodeURIComponent(caseId)}/${encodeURIComponent(columnId)}`;
  }

  function caseHref(c) {
    return `../${c.file}#L${c.line}`;
  }

  function versionsText(v) {
    var parts = [];
    if (v.executor) parts.push(`executor ${v.executor}`);
    if (v.codemode) parts.push(`codemode ${v.codemode}`);
    if (v.workerd) parts.push(`workerd ${v.workerd}`);
    if (v.wrangler) parts.push(`wrangler ${v.wrangler}`);
    if (v.compatibilityDate) parts.push(`compat ${v.compatibilityDate}`);
    if (v.compatibilityFlags.length) parts.push(`flags ${v.compatibilityFlags.join(', ')}`);
    return parts.join(' · ');
  }

  // Header: run metadata and the verdict. Infra-errors are named apart from failures.
  var totalFail = 0,
    totalInfra = 0;
  run.summary.columns.forEach((s) => {
    totalFail += s.fail;
    totalInfra += s.infraError;
  });
  var brokenColumns = columns.filter((c) => c.infraError);
  document.getElementById('run-meta').textContent =
    'Run ' +
    run.run.date +
    ' · commit ' +
    (run.run.commit ? run.run.commit.slice(0, 12) : 'unknown') +
    (run.run.dirty ? ' (uncommitted changes)' : '') +
    ' · ' +
    Math.round(run.run.durationMs / 1000) +
    ' s · ' +
    run.cases.length +
    ' cases · ' +
    columns.length +
    ' columns';
  var verdict = document.getElementById('verdict');
  if (run.summary.green) {
    verdict.textContent = `${ui.symbols.pass} Green: no failure and no infra-error`;
    verdict.className = 'verdict green';
  } else {
    var parts = [];
    if (totalFail) parts.push(`${totalFail} failed`);
    if (totalInfra || brokenColumns.length)
      parts.push(
        (totalInfra || brokenColumns.length) +
          ' infra-error' +
          ((totalInfra || brokenColumns.length) === 1 ? '' : 's') +
          ' (not results)',
      );
    verdict.textContent = `${totalFail ? ui.symbols.fail : ui.symbols['infra-error']} Not green: ${parts.join(', ')}`;
    verdict.className = `verdict ${totalFail ? 'red' : 'infra'}`;
  }
  if (brokenColumns.length) {
    var problems = document.getElementById('column-problems');
    problems.hidden = false;
    brokenColumns.forEach((c) => {
      problems.appendChild(el('div', { text: `${ui.symbols['infra-error']} ${c.label}: ${c.infraError}` }));
    });
  }

  // Column heads: label, versions, and the column's summary.
  var head = document.getElementById('grid-head');
  var headRow = el('tr', {}, [el('th', { scope: 'col', text: 'Case' })]);
  columns.forEach((c) => {
    var s = summaries.get(c.id);
    var summary = el('div', { className: 'col-summary', dataset: { summaryFor: c.id } });
    ui.statuses.forEach((status) => {
      var count = s ? (status === 'infra-error' ? s.infraError : s[status]) : 0;
      if (!count && status !== 'pass' && status !== 'fail') return;
      summary.appendChild(
        el('span', {
          className: `count s-${status}`,
          title: `${count} ${ui.labels[status]}`,
          text: `${ui.symbols[status]} ${count}`,
        }),
      );
    });
    // The full reason is in the banner above the grid; the head stays short.
    if (c.infraError)
      summary.appendChild(
        el('span', {
          className: 'col-infra',
          title: c.infraError,
          text: `${ui.symbols['infra-error']} ${ui.columnDidNotRun}`,
        }),
      );
    headRow.appendChild(
      el('th', { scope: 'col', className: 'col-head', dataset: { column: c.id } }, [
        el('div', { className: 'col-label', text: c.label }),
        el('div', { className: 'col-versions', text: versionsText(c.versions) }),
        summary,
      ]),
    );
  });
  head.appendChild(headRow);

  // Rows, grouped by area in catalogue order.
  var grid = document.getElementById('grid');
  var areas = [];
  var byArea = new Map();
  run.cases.forEach((c) => {
    if (!byArea.has(c.area)) {
      byArea.set(c.area, []);
      areas.push(c.area);
    }
    byArea.get(c.area).push(c);
  });
  var features = new Set();
  var bodies = [];
  areas.forEach((area) => {
    var body = el('tbody', { dataset: { area: area } });
    var list = byArea.get(area);
    body.appendChild(
      el('tr', { className: 'area-row' }, [
        el('th', { colspan: columns.length + 1, scope: 'rowgroup', text: `${area} (${list.length})` }),
      ]),
    );
    list.forEach((c) => {
      c.features.forEach((f) => {
        features.add(f);
      });
      var hasFail = false,
        hasInfra = false;
      var row = el('tr', { className: 'case-row', id: `case-${c.id}` }, [
        el('th', { scope: 'row', className: 'case-cell' }, [
          el('a', { className: 'case-id', href: caseHref(c), title: `${c.file}:${c.line}`, text: c.id }),
          el('span', { className: 'case-desc', text: c.description }),
        ]),
      ]);
      columns.forEach((col) => {
        var cell = cells.get(`${c.id}\u0000${col.id}`);
        var td = el('td', {});
        if (cell) {
          if (cell.status === 'fail') hasFail = true;
          if (cell.status === 'infra-error') hasInfra = true;
          var label = cell.unexpectedPass ? ui.staleMark : ui.labels[cell.status];
          td.appendChild(
            el('a', {
              className: `cell s-${cell.status}${cell.unexpectedPass ? ' stale' : ''}`,
              href: cellHash(c.id, col.id),
              title: cell.reason || ui.labels[cell.status],
              dataset: { case: c.id, column: col.id, status: cell.status },
              text: `${ui.symbols[cell.status]} ${label}`,
            }),
          );
        }
        row.appendChild(td);
      });
      row.dataset.area = area;
      row.dataset.features = ` ${c.features.join(' ')} `;
      row.dataset.fail = hasFail ? '1' : '0';
      row.dataset.infra = hasInfra ? '1' : '0';
      row.dataset.text = `${c.id} ${c.description}`.toLowerCase();
      body.appendChild(row);
    });
    grid.appendChild(body);
    bodies.push(body);
  });

  // Filters. The column heads stick just below the (sticky) filter bar.
  var filterBar = document.querySelector('.filters');
  function placeHeads() {
    document.documentElement.style.setProperty('--filters-height', `${filterBar.offsetHeight}px`);
  }
  window.addEventListener('resize', placeHeads);
  placeHeads();
  var rowsFilter = document.getElementById('filter-rows');
  var areaFilter = document.getElementById('filter-area');
  var featureFilter = document.getElementById('filter-feature');
  var textFilter = document.getElementById('filter-text');
  areas.forEach((a) => {
    areaFilter.appendChild(el('option', { value: a, text: a }));
  });
  Array.from(features)
    .sort()
    .forEach((f) => {
      featureFilter.appendChild(el('option', { value: f, text: f }));
    });

  function applyFilters() {
    var rows = rowsFilter.value,
      area = areaFilter.value,
      feature = featureFilter.value,
      text = textFilter.value.trim().toLowerCase();
    var shown = 0;
    bodies.forEach((body) => {
      var any = false;
      Array.prototype.forEach.call(body.querySelectorAll('tr.case-row'), (row) => {
        var visible =
          (rows === 'all' ||
            (rows === 'failures' && row.dataset.fail === '1') ||
            (rows === 'infra' && row.dataset.infra === '1')) &&
          (!area || row.dataset.area === area) &&
          (!feature || row.dataset.features.indexOf(` ${feature} `) !== -1) &&
          (!text || row.dataset.text.indexOf(text) !== -1);
        row.hidden = !visible;
        if (visible) {
          any = true;
          shown += 1;
        }
      });
      body.hidden = !any;
    });
    document.getElementById('shown-count').textContent = `showing ${shown} of ${run.cases.length} cases`;
  }
  [rowsFilter, areaFilter, featureFilter].forEach((f) => {
    f.addEventListener('change', applyFilters);
  });
  textFilter.addEventListener('input', applyFilters);
  applyFilters();

  // Details: a cell's case, column, reason and diff.
  var details = document.getElementById('details');
  var detailsBody = document.getElementById('details-body');
  var selected = null;

  function diffBlock(diff) {
    var pre = el('pre', { className: 'diff' });
    diff.split('\n').forEach((line, i) => {
      if (i) pre.appendChild(document.createTextNode('\n'));
      var cls = /^\+/.test(line) ? 'diff-add' : /^-/.test(line) ? 'diff-del' : null;
      pre.appendChild(cls ? el('span', { className: cls, text: line }) : document.createTextNode(line));
    });
    return pre;
  }

  function showDetails(caseId, columnId) {
    var c = casesById.get(caseId),
      col = columnsById.get(columnId),
      cell = cells.get(`${caseId}\u0000${columnId}`);
    if (!c || !col || !cell) return;
    detailsBody.textContent = '';
    var rows = [
      ['column', col.label + (versionsText(col.versions) ? ` — ${versionsText(col.versions)}` : '')],
      [
        'status',
        ui.symbols[cell.status] +
          ' ' +
          (cell.unexpectedPass ? `${ui.labels.fail} (${ui.staleMark})` : ui.labels[cell.status]),
      ],
    ];
    if (cell.reason) rows.push(['reason', cell.reason]);
    if (cell.probe) rows.push(['probe', ui.probeNotes[cell.probe]]);
    rows.push(['area', c.area], ['features', c.features.join(', ') || '—']);
    var dl = el('dl', {});
    rows.forEach((r) => {
      dl.appendChild(el('dt', { text: r[0] }));
      dl.appendChild(el('dd', { text: r[1] }));
    });
    var dd = el('dd', {}, [el('a', { href: caseHref(c), text: `${c.file}:${c.line}` })]);
    dl.appendChild(el('dt', { text: 'case' }));
    dl.appendChild(dd);
    detailsBody.appendChild(el('h3', { id: 'details-title', text: c.id }));
    detailsBody.appendChild(el('p', { text: c.description }));
    detailsBody.appendChild(dl);
    if (cell.diff) {
      detailsBody.appendChild(el('h4', { text: 'diff' }));
      detailsBody.appendChild(diffBlock(cell.diff));
    }
    details.hidden = false;
    if (selected) selected.classList.remove('selected');
    selected = document.querySelector(
      `a.cell[data-case="${CSS.escape(caseId)}"][data-column="${CSS.escape(columnId)}"]`,
    );
    if (selected) selected.classList.add('selected');
  }

  function fromHash() {
    var match = /^#cell=([^/]*)\/(.*)$/.exec(location.hash);
    if (match) showDetails(decodeURIComponent(match[1]), decodeURIComponent(match[2]));
  }
  grid.addEventListener('click', (event) => {
    var link = event.target.closest('a.cell');
    if (!link) return;
    showDetails(link.dataset.case, link.dataset.column);
  });
  document.getElementById('details-close').addEventListener('click', () => {
    details.hidden = true;
    if (selected) selected.classList.remove('selected');
    history.replaceState(null, '', location.pathname + location.search);
  });
  window.addEventListener('hashchange', fromHash);
  fromHash();

  // Legend.
  var legend = document.getElementById('legend');
  ui.statuses.forEach((status) => {
    legend.appendChild(
      el('dt', {}, [el('span', { className: `cell s-${status}`, text: `${ui.symbols[status]} ${ui.labels[status]}` })]),
    );
    legend.appendChild(el('dd', { text: ui.meanings[status] }));
  });

  // Transitions, newest first.
  var transitionsBox = document.getElementById('transitions');
  if (!data.transitions.length) {
    transitionsBox.appendChild(el('p', { text: 'No case changed status between recorded runs.' }));
  } else {
    var table = el('table', {}, [
      el('thead', {}, [
        el(
          'tr',
          {},
          ['run', 'case', 'first column', 'changes'].map((h) => el('th', { scope: 'col', text: h })),
        ),
      ]),
    ]);
    var tbody = el('tbody', {});
    data.transitions.forEach((t) => {
      var changes = t.changes
        .map((ch) => {
          var release = ch.toRelease !== undefined ? ` (${ch.fromRelease || '?'} → ${ch.toRelease || '?'})` : '';
          return `${ch.column}: ${ch.from} → ${ch.to}${release}`;
        })
        .join('; ');
      var first = columnsById.get(t.firstColumn);
      tbody.appendChild(
        el('tr', {}, [
          el('td', { text: t.date + (t.commit ? ` · ${t.commit.slice(0, 12)}` : '') }),
          el('td', {}, [
            casesById.has(t.case)
              ? el('a', { className: 'case-id', href: `#case-${t.case}`, text: t.case })
              : el('span', { className: 'case-id', text: t.case }),
          ]),
          el('td', { text: first ? first.label : t.firstColumn }),
          el('td', { text: changes }),
        ]),
      );
    });
    table.appendChild(tbody);
    transitionsBox.appendChild(table);
  }
})();
