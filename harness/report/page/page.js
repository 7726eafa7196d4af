// The report page: draws the verdict, what changed, the legend, the failures and the grid from the
// embedded run, filters the rows, and shows a cell's reason and diff. Plain browser JavaScript with
// no modules, so the page works from file://. Every text comes from the embedded data.
(() => {
  var data = JSON.parse(document.getElementById('matrix-data').textContent);
  var run = data.run;
  var ui = data.ui;
  var columns = run.columns;
  var casesById = new Map(run.cases.map((c) => [c.id, c]));
  var cells = new Map(run.cells.map((c) => [`${c.case}\u0000${c.column}`, c]));
  var columnsById = new Map(columns.map((c) => [c.id, c]));
  var summaries = new Map(run.summary.columns.map((s) => [s.column, s]));
  var since = run.since || { previous: null, changes: [], newCases: [], removedCases: [] };
  var changed = new Set(since.changes.map((c) => c.case));
  var fresh = new Set(since.newCases);

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
      if (child !== null && child !== undefined)
        node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }
  function byId(id) {
    return document.getElementById(id);
  }
  function caseHref(c) {
    return `${data.root}/${c.file}#L${c.line}`;
  }
  function cellHref(caseId, columnId) {
    return `#cell=${encodeURIComponent(caseId)}/${encodeURIComponent(columnId)}`;
  }
  function label(columnId) {
    var column = columnsById.get(columnId);
    return column ? column.label : columnId;
  }
  function cellLink(caseId, columnId, text) {
    return el(
      'a',
      { href: cellHref(caseId, columnId), className: 'cell-link', dataset: { case: caseId, column: columnId } },
      [text],
    );
  }
  /** The short text a cell shows: its symbol, and a word where the symbol alone would not say enough. */
  function cellText(cell) {
    var symbol = ui.symbols[cell.status];
    if (cell.unexpectedPass) return `${symbol} ${ui.staleMark}`;
    if (cell.rerun && cell.rerun.status === 'fail' && cell.status !== 'fail') return `${symbol} ${ui.flakyMark}`;
    if (cell.status === 'pass') return cell.expectation === 'upstream' ? `${symbol} ${ui.upstreamMark}` : symbol;
    if (cell.status === 'skip') return `${symbol} ${ui.labels.skip}${cell.expectation === 'skip' ? ' ✓' : ''}`;
    if (cell.status === 'unsupported') return symbol;
    return `${symbol} ${ui.labels[cell.status]}`;
  }

  // The verdict, the run, and what limited it.
  var verdict = byId('verdict');
  verdict.textContent = `${run.summary.green ? ui.symbols.pass : ui.symbols.fail} ${ui.verdict}`;
  verdict.className = `verdict ${run.summary.green ? 'green' : 'red'}`;
  byId('run-meta').textContent = ui.runLine;
  var banners = byId('banners');
  if (ui.limited) banners.appendChild(el('p', { className: 'banner limited', text: ui.limited }));
  columns
    .filter((c) => c.infraError)
    .forEach((c) => {
      banners.appendChild(
        el('p', { className: 'banner infra', text: `${ui.symbols['infra-error']} ${c.label}: ${c.infraError}` }),
      );
    });

  // The release diff: what upstream's newest release changed, before anything else; then what
  // workerd's newest release changes of ours.
  if (!run.releaseDiff && ui.releaseDiffMissing) {
    // Why there is none, where it would be: on the first screen, not only in a column head below.
    var missingBox = byId('release-diff');
    missingBox.hidden = false;
    missingBox.appendChild(el('h2', { id: 'release-diff-title', text: ui.releaseDiffPlainTitle }));
    missingBox.appendChild(el('p', { className: 'empty-note', text: ui.releaseDiffMissing }));
  }
  var showDiff = (boxId, titleId, rd, uiDiff) => {
    var diffBox = byId(boxId);
    if (!rd || !uiDiff) return;
    diffBox.hidden = false;
    diffBox.appendChild(el('h2', { id: titleId, text: uiDiff.title }));
    diffBox.appendChild(el('p', { text: uiDiff.intro }));
    if (!rd.rows.length) diffBox.appendChild(el('p', { className: 'empty-note', text: uiDiff.none }));
    var side = (caseId, column, entry) =>
      el('td', {}, [
        cellLink(caseId, column, `${ui.symbols[entry.status]} ${ui.labels[entry.status]}`),
        entry.outcome ? el('code', { className: 'outcome', text: entry.outcome }) : null,
      ]);
    uiDiff.kinds.forEach((kind) => {
      var rows = rd.rows.filter((row) => row.kind === kind.kind);
      if (!rows.length) return;
      diffBox.appendChild(el('h3', { text: `${kind.title} (${rows.length})` }));
      var table = el('table', { className: 'diff-table', dataset: { kind: kind.kind } }, [
        el('thead', {}, [
          el(
            'tr',
            {},
            uiDiff.head.map((text) => el('th', { scope: 'col', text: text })),
          ),
        ]),
      ]);
      var body = el('tbody', {});
      rows.forEach((row) => {
        body.appendChild(
          el('tr', { dataset: { case: row.case } }, [
            el('th', { scope: 'row' }, [
              el('a', { href: `#case-${row.case}`, className: 'case-id', text: row.case }),
              casesById.get(row.case)?.triage
                ? el('ul', { className: 'notes' }, [triageNote(casesById.get(row.case).triage)])
                : null,
            ]),
            side(row.case, rd.from.column, row.from),
            side(row.case, rd.to.column, row.to),
          ]),
        );
      });
      table.appendChild(body);
      diffBox.appendChild(el('div', { className: 'diff-wrap' }, [table]));
    });
    if (uiDiff.unknown) diffBox.appendChild(el('p', { className: 'empty-note', text: uiDiff.unknown }));
  };
  showDiff('release-diff', 'release-diff-title', run.releaseDiff, ui.releaseDiff);
  showDiff('workerd-diff', 'workerd-diff-title', run.workerdDiff, ui.workerdDiff);

  // How each release did, on the first screen: counts per column and the changes since the previous run.
  var summaryBox = byId('column-summary');
  var changesPerColumn = new Map();
  since.changes.forEach((change) => {
    changesPerColumn.set(change.column, (changesPerColumn.get(change.column) || 0) + 1);
  });
  var summaryTable = el('table', { className: 'summary-table' }, [
    el('thead', {}, [
      el('tr', {}, [
        el('th', { scope: 'col', text: ui.summaryColumn }),
        ...ui.statuses.map((status) => el('th', { scope: 'col', text: `${ui.symbols[status]} ${ui.labels[status]}` })),
        el('th', { scope: 'col', text: ui.summaryChanged }),
      ]),
    ]),
  ]);
  var summaryBody = el('tbody', {});
  columns.forEach((col) => {
    var s = summaries.get(col.id);
    summaryBody.appendChild(
      el('tr', { dataset: { column: col.id } }, [
        el('th', { scope: 'row', text: col.label }),
        ...ui.statuses.map((status) => el('td', { className: `s-${status}`, text: String(s ? s.counts[status] : 0) })),
        el('td', { text: since.previous ? String(changesPerColumn.get(col.id) || 0) : '—' }),
      ]),
    );
  });
  summaryTable.appendChild(summaryBody);
  summaryBox.appendChild(el('h2', { id: 'column-summary-title', className: 'visually-hidden', text: ui.summaryTitle }));
  summaryBox.appendChild(el('div', { className: 'diff-wrap' }, [summaryTable]));

  // What changed since the previous run.
  var sinceBox = byId('since');
  sinceBox.appendChild(el('h2', { id: 'since-title', text: ui.sinceTitle }));
  if (!since.previous) sinceBox.appendChild(el('p', { className: 'empty-note', text: ui.noPreviousRun }));
  else {
    sinceBox.appendChild(el('p', { text: ui.comparedWith }));
    if (!since.changes.length) sinceBox.appendChild(el('p', { className: 'empty-note', text: ui.nothingChanged }));
    else {
      // A long list shows its first entries; the rest are one click away.
      var lists = [ui.changes.slice(0, ui.changesShown), ui.changes.slice(ui.changesShown)].map((part) => {
        var list = el('ul', { className: 'changes' });
        part.forEach((change) => {
          list.appendChild(el('li', {}, [cellLink(change.case, change.column, change.case), `: ${change.text}`]));
        });
        return list;
      });
      sinceBox.appendChild(lists[0]);
      if (lists[1].children.length)
        sinceBox.appendChild(
          el('details', { className: 'more' }, [
            el('summary', { text: ui.moreChanges.replace('{n}', lists[1].children.length) }),
            lists[1],
          ]),
        );
    }
    if (ui.flakySince) {
      sinceBox.appendChild(el('p', { className: 'flaky-since', text: ui.flakySince }));
      var flakyChanges = el('ul', { className: 'changes flaky-changes' });
      ui.flakyChanges.forEach((change) => {
        flakyChanges.appendChild(el('li', {}, [cellLink(change.case, change.column, change.case), `: ${change.text}`]));
      });
      sinceBox.appendChild(flakyChanges);
    }
    [
      [since.newCases, ui.newCases],
      [since.removedCases, ui.removedCases],
    ].forEach((pair) => {
      if (!pair[0].length) return;
      // A fresh clone's first run may add dozens of cases: the first few, and the rest one click away.
      var idList = (ids) => {
        var span = el('span', { className: 'case-ids' });
        ids.forEach((id, i) => {
          if (i) span.appendChild(document.createTextNode(', '));
          span.appendChild(
            casesById.has(id)
              ? el('a', { href: `#case-${id}`, className: 'case-id', text: id })
              : el('code', { text: id }),
          );
        });
        return span;
      };
      var p = el('p', { className: 'case-list' }, [`${pair[1]} `, idList(pair[0].slice(0, ui.changesShown))]);
      sinceBox.appendChild(p);
      var rest = pair[0].slice(ui.changesShown);
      if (rest.length)
        sinceBox.appendChild(
          el('details', { className: 'more' }, [
            el('summary', { text: ui.moreCaseIds.replace('{n}', rest.length) }),
            idList(rest),
          ]),
        );
    });
  }

  // The legend.
  var legend = byId('legend');
  ui.legend.forEach((entry) => {
    legend.appendChild(el('dt', {}, [el('span', { className: `cell ${entry.className}`, text: entry.mark })]));
    legend.appendChild(el('dd', { text: entry.meaning }));
  });

  // The release boundaries the skips name, each with its reason written once.
  var boundariesBox = byId('boundaries');
  boundariesBox.appendChild(el('h2', { id: 'boundaries-title', text: ui.boundariesTitle }));
  var boundaryList = el('dl', {});
  run.boundaries.forEach((b) => {
    boundaryList.appendChild(el('dt', {}, [el('code', { text: b.id }), ` ${b.release}`]));
    boundaryList.appendChild(el('dd', { text: b.reason }));
  });
  boundariesBox.appendChild(boundaryList);

  // Failures, listed before the grid: what a nightly reader opens the page for.
  var failuresBox = byId('failures');
  var failing = run.cells.filter((c) => c.status === 'fail');
  failuresBox.appendChild(el('h2', { id: 'failures-title', text: `${ui.failuresHeading} (${failing.length})` }));
  if (!failing.length) failuresBox.appendChild(el('p', { className: 'empty-note', text: ui.none }));
  else {
    var failureList = el('ul', { className: 'changes' });
    failing.forEach((cell) => {
      failureList.appendChild(
        el('li', {}, [
          cellLink(cell.case, cell.column, cell.case),
          ` on ${label(cell.column)}: ${(cell.reason || '').split('\n')[0]}`,
        ]),
      );
    });
    failuresBox.appendChild(failureList);
  }
  // Flaky cells, apart: they failed once and passed on the rerun, so they are not failures.
  var flaky = run.cells.filter((c) => c.rerun && c.rerun.status === 'fail' && c.status !== 'fail');
  if (flaky.length) {
    failuresBox.appendChild(el('h3', { id: 'flaky-title', text: ui.flakyTitle }));
    var flakyList = el('ul', { className: 'changes flaky-list' });
    flaky.forEach((cell) => {
      flakyList.appendChild(
        el('li', {}, [
          cellLink(cell.case, cell.column, cell.case),
          ` on ${label(cell.column)}: ${ui.firstAttempt}: ${(cell.rerun.reason || '').split('\n')[0]}`,
        ]),
      );
    });
    failuresBox.appendChild(flakyList);
  }

  // A reason most of a column's cells share (e.g. why ours-worker runs only flows) is said once, in its head.
  var columnWide = new Map();
  columns.forEach((col) => {
    var reasons = new Map();
    var total = 0;
    run.cells.forEach((cell) => {
      if (cell.column !== col.id) return;
      total += 1;
      if (cell.status === 'unsupported') reasons.set(cell.reason, (reasons.get(cell.reason) || 0) + 1);
    });
    reasons.forEach((n, reason) => {
      if (n * 2 > total) columnWide.set(col.id, { reason: reason, count: n });
    });
  });

  // Column heads: label, versions, counts.
  var headRow = el('tr', {}, [el('th', { scope: 'col', className: 'case-head', text: 'Case' })]);
  columns.forEach((c) => {
    var s = summaries.get(c.id);
    var counts = el('div', { className: 'col-summary', dataset: { summaryFor: c.id } });
    ui.statuses.forEach((status) => {
      var n = s ? s.counts[status] : 0;
      if (n || status === 'pass' || status === 'fail')
        counts.appendChild(
          el('span', {
            className: `count s-${status}`,
            title: `${n} ${ui.labels[status]}`,
            text: `${ui.symbols[status]}${n}`,
          }),
        );
    });
    headRow.appendChild(
      el('th', { scope: 'col', className: 'col-head', title: c.versionsLine, dataset: { column: c.id } }, [
        el('div', { className: 'col-label', text: c.label }),
        el('div', { className: 'col-versions', text: c.versionsLine }),
        c.headNote ? el('div', { className: 'col-note', text: c.headNote }) : null,
        columnWide.has(c.id)
          ? el('div', {
              className: 'col-note col-wide',
              text: ui.columnWide
                .replace('{n}', columnWide.get(c.id).count)
                .replace('{reason}', columnWide.get(c.id).reason),
            })
          : null,
        counts,
      ]),
    );
  });
  byId('grid-head').appendChild(headRow);

  /** The case's recent runs, oldest first: one small cell per run, coloured by its worst status. */
  function stripFor(caseId) {
    var strip = data.history.strips[caseId];
    if (!strip || strip.length < 2) return null;
    return el(
      'span',
      { className: 'strip', dataset: { case: caseId } },
      strip.map((status, index) =>
        el('span', {
          className: `strip-cell s-${status}`,
          title: `${data.history.dates[index]}: ${status === 'none' ? '—' : ui.labels[status]}`,
        }),
      ),
    );
  }

  /** A case's triage entry: the note and the link where it is tracked. */
  function triageNote(triage) {
    return el('li', { className: 'note-triage' }, [
      `${ui.triageMark} ${triage.note} `,
      el('a', { href: triage.link, className: 'triage-link', text: triage.link }),
    ]);
  }

  /** The row's notes: why it differs from upstream, and where it is skipped or not run, with the columns. */
  function notesFor(c) {
    var notes = el('ul', { className: 'notes' });
    if (c.upstreamReason)
      notes.appendChild(
        el('li', { className: 'note-upstream', text: `${ui.upstreamMark} ${ui.upstreamNote} ${c.upstreamReason}` }),
      );
    if (c.triage) notes.appendChild(triageNote(c.triage));
    var groups = new Map();
    columns.forEach((col) => {
      var cell = cells.get(`${c.id}\u0000${col.id}`);
      if (!cell || (cell.status !== 'skip' && cell.status !== 'unsupported')) return;
      var wide = columnWide.get(col.id);
      if (cell.status === 'unsupported' && wide && wide.reason === cell.reason) return;
      var text =
        cell.status === 'skip'
          ? [cell.label, cell.note, cell.expectation === 'skip' ? ui.failsAsSaid : ''].filter(Boolean).join(' ')
          : cell.reason;
      var key = `${cell.status}\u0000${text}`;
      if (!groups.has(key)) groups.set(key, { status: cell.status, text: text, columns: [] });
      groups.get(key).columns.push(col.label);
    });
    groups.forEach((group) => {
      var what = group.status === 'unsupported' ? ui.unsupportedNote : ui.skipNote;
      notes.appendChild(
        el('li', {
          className: `note-${group.status}`,
          text: `${ui.symbols[group.status]} ${what.replace('{columns}', group.columns.join(', '))} ${group.text}`,
        }),
      );
    });
    return notes.children.length ? notes : null;
  }

  // Rows, grouped by area in catalogue order.
  var grid = byId('grid');
  var areas = [];
  var byArea = new Map();
  var features = new Set();
  run.cases.forEach((c) => {
    if (!byArea.has(c.area)) {
      byArea.set(c.area, []);
      areas.push(c.area);
    }
    byArea.get(c.area).push(c);
    c.features.forEach((f) => {
      features.add(f);
    });
  });
  var bodies = areas.map((area) => {
    var body = el('tbody', { dataset: { area: area } });
    var list = byArea.get(area);
    body.appendChild(
      el('tr', { className: 'area-row' }, [
        el('th', { colspan: columns.length + 1, scope: 'rowgroup', text: `${area} (${list.length})` }),
      ]),
    );
    list.forEach((c) => {
      var fail = false;
      var infra = false;
      var row = el('tr', { className: 'case-row', id: `case-${c.id}` }, [
        el('th', { scope: 'row', className: 'case-cell' }, [
          el('a', { className: 'case-id', href: caseHref(c), title: `${c.file}:${c.line}`, text: c.id }),
          fresh.has(c.id) ? el('span', { className: 'new-mark', text: ui.newMark }) : null,
          el('span', { className: 'case-desc', text: c.description }),
          stripFor(c.id),
          notesFor(c),
        ]),
      ]);
      columns.forEach((col) => {
        var cell = cells.get(`${c.id}\u0000${col.id}`);
        var td = el('td', {});
        if (cell) {
          td.className = 'cell-box';
          fail = fail || cell.status === 'fail';
          infra = infra || cell.status === 'infra-error';
          td.appendChild(
            el('a', {
              className: `cell s-${cell.status}${cell.unexpectedPass ? ' stale' : ''}`,
              href: cellHref(c.id, col.id),
              title: cell.reason || ui.labels[cell.status],
              dataset: { case: c.id, column: col.id, status: cell.status },
              text: cellText(cell),
            }),
          );
        }
        row.appendChild(td);
      });
      row.dataset.area = area;
      row.dataset.features = ` ${c.features.join(' ')} `;
      row.dataset.fail = fail ? '1' : '0';
      row.dataset.infra = infra ? '1' : '0';
      row.dataset.changed = changed.has(c.id) ? '1' : '0';
      row.dataset.fresh = fresh.has(c.id) ? '1' : '0';
      row.dataset.text = `${c.id} ${c.description}`.toLowerCase();
      body.appendChild(row);
    });
    grid.appendChild(body);
    return body;
  });

  // Filters, with an empty state that says so.
  var rowsFilter = byId('filter-rows');
  var areaFilter = byId('filter-area');
  var featureFilter = byId('filter-feature');
  var textFilter = byId('filter-text');
  areas.forEach((a) => {
    areaFilter.appendChild(el('option', { value: a, text: a }));
  });
  Array.from(features)
    .sort()
    .forEach((f) => {
      featureFilter.appendChild(el('option', { value: f, text: f }));
    });
  var rowKey = { failures: 'fail', infra: 'infra', changed: 'changed', new: 'fresh' };
  function applyFilters() {
    var rows = rowsFilter.value;
    var area = areaFilter.value;
    var feature = featureFilter.value;
    var text = textFilter.value.trim().toLowerCase();
    var shown = 0;
    bodies.forEach((body) => {
      var any = false;
      Array.prototype.forEach.call(body.querySelectorAll('tr.case-row'), (row) => {
        var visible =
          (rows === 'all' || row.dataset[rowKey[rows]] === '1') &&
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
    byId('shown-count').textContent = ui.shown.replace('{shown}', shown).replace('{total}', run.cases.length);
    var empty = byId('empty');
    empty.hidden = shown > 0;
    empty.textContent = ui.noMatch;
  }
  [rowsFilter, areaFilter, featureFilter].forEach((f) => {
    f.addEventListener('change', applyFilters);
  });
  textFilter.addEventListener('input', applyFilters);
  applyFilters();

  // Details: a cell's case, column, reason and diff.
  var details = byId('details');
  var detailsBody = byId('details-body');
  var selected = null;
  function showDetails(caseId, columnId) {
    var c = casesById.get(caseId);
    var col = columnsById.get(columnId);
    var cell = cells.get(`${caseId}\u0000${columnId}`);
    if (!c || !col || !cell) return;
    detailsBody.textContent = '';
    var rows = [
      ['column', col.label + (col.versionsLine ? ` — ${col.versionsLine}` : '')],
      [
        'status',
        `${ui.symbols[cell.status]} ${cell.unexpectedPass ? `${ui.labels.fail} (${ui.staleMark})` : ui.labels[cell.status]}`,
      ],
    ];
    if (cell.reason) rows.push(['reason', cell.reason]);
    if (cell.rerun) rows.push([ui.firstAttempt, `${ui.labels[cell.rerun.status]}: ${cell.rerun.reason || ''}`]);
    if (cell.expectation) rows.push(['judged by', ui.judgedBy[cell.expectation]]);
    rows.push(['area', c.area], ['features', c.features.join(', ') || '—']);
    var dl = el('dl', {});
    rows.forEach((r) => {
      dl.appendChild(el('dt', { text: r[0] }));
      dl.appendChild(el('dd', { text: r[1] }));
    });
    dl.appendChild(el('dt', { text: 'case' }));
    dl.appendChild(el('dd', {}, [el('a', { href: caseHref(c), text: `${c.file}:${c.line}` })]));
    detailsBody.appendChild(el('h3', { id: 'details-title', text: c.id }));
    detailsBody.appendChild(el('p', { text: c.description }));
    detailsBody.appendChild(dl);
    if (cell.diff) {
      detailsBody.appendChild(el('h4', { text: 'diff' }));
      detailsBody.appendChild(el('pre', { className: 'diff', text: cell.diff }));
    }
    details.hidden = false;
    document.body.classList.add('details-open');
    placeDetails();
    if (selected) selected.classList.remove('selected');
    selected = document.querySelector(
      `a.cell[data-case="${CSS.escape(caseId)}"][data-column="${CSS.escape(columnId)}"]`,
    );
    if (selected) {
      selected.classList.add('selected');
      revealSelected();
      placeDetails();
    }
  }
  // Opened from a list above the grid, or far from its row: bring the row into the part of the
  // window that neither the sticking heads nor the panel cover.
  function revealSelected() {
    var heads = Array.from(grid.querySelectorAll('thead th'));
    var headsHeight = Math.max(0, ...heads.map((head) => head.getBoundingClientRect().height));
    var panel = details.getBoundingClientRect();
    // A sheet along the bottom (a narrow window) ends the free part where it starts.
    var bottom = panel.left < window.innerWidth / 2 ? panel.top : window.innerHeight;
    var box = selected.getBoundingClientRect();
    if (box.top >= headsHeight && box.bottom <= bottom) return;
    window.scrollBy(0, box.top - (headsHeight + bottom - box.height) / 2);
  }
  function fromHash() {
    var match = /^#cell=([^/]*)\/(.*)$/.exec(location.hash);
    if (match) showDetails(decodeURIComponent(match[1]), decodeURIComponent(match[2]));
  }
  // The panel starts below the column heads, wherever they are, so it never covers them.
  function placeDetails() {
    if (details.hidden) return;
    // The heads (th) stick to the top of the window, not their thead: measure them.
    var heads = Array.from(grid.querySelectorAll('thead th'));
    var below = Math.max(0, ...heads.map((head) => head.getBoundingClientRect().bottom));
    details.style.setProperty('--details-top', `${Math.round(below) + 8}px`);
  }
  window.addEventListener('scroll', placeDetails, { passive: true });
  window.addEventListener('resize', placeDetails);
  // The whole table cell opens its details, not only the badge in it.
  document.addEventListener('click', (event) => {
    var link = event.target.closest('a.cell, a.cell-link');
    if (link) {
      showDetails(link.dataset.case, link.dataset.column);
      return;
    }
    var box = event.target.closest('td.cell-box');
    var badge = box?.querySelector('a.cell');
    if (badge) location.hash = badge.getAttribute('href');
  });
  byId('details-close').addEventListener('click', () => {
    details.hidden = true;
    document.body.classList.remove('details-open');
    if (selected) selected.classList.remove('selected');
    history.replaceState(null, '', location.pathname + location.search);
  });
  window.addEventListener('hashchange', fromHash);
  fromHash();

  // Earlier runs that changed something, newest first.
  var earlierBox = byId('earlier');
  earlierBox.appendChild(el('h2', { id: 'earlier-title', text: ui.earlierTitle }));
  if (!data.earlier.length) earlierBox.appendChild(el('p', { className: 'empty-note', text: ui.noEarlier }));
  data.earlier.forEach((entry) => {
    var list = el('ul', { className: 'changes' });
    entry.lines.forEach((line) => {
      list.appendChild(el('li', { text: line }));
    });
    earlierBox.appendChild(el('h3', { text: entry.title }));
    earlierBox.appendChild(list);
  });
})();
