// The chat webview. It renders the extension's chat events as text nodes only: model output is
// never parsed as HTML (no innerHTML anywhere), so nothing the model writes can run here.
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById('log');
  const input = document.getElementById('input');
  const form = document.getElementById('composer');
  const cancel = document.getElementById('cancel');
  const send = document.getElementById('send');
  const session = document.getElementById('session');
  /** turnId -> the turn's element; `${turnId}/${artifactId}` -> the answer's text element. */
  const turns = new Map();
  const answers = new Map();
  const tools = new Map();

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const scroll = () => log.scrollTo(0, log.scrollHeight);
  const turnOf = (id) => {
    let t = turns.get(id);
    if (!t) {
      t = el('section', 'turn');
      turns.set(id, t);
      log.appendChild(t);
    }
    return t;
  };

  function approval(ev) {
    const box = el('div', 'approval');
    box.appendChild(el('div', 'question', ev.question));
    if (ev.preview) box.appendChild(el('pre', 'preview', ev.preview));
    const guidance = el('input', 'guidance');
    guidance.placeholder = 'Guidance for a rejection (optional): what to do instead';
    const buttons = el('div', 'row');
    const answer = (decision) => {
      vscode.postMessage({ type: 'answer', decision, guidance: decision === 'reject' ? guidance.value : undefined });
      box.classList.add('answered');
      for (const b of box.querySelectorAll('button, input')) b.disabled = true;
    };
    const approve = el('button', 'primary', 'Approve');
    approve.addEventListener('click', () => answer('approve'));
    const reject = el('button', '', 'Reject');
    reject.addEventListener('click', () => answer('reject'));
    buttons.append(approve, reject);
    box.append(guidance, buttons);
    return box;
  }

  function render(ev) {
    switch (ev.type) {
      case 'session': {
        const s = ev.session;
        session.textContent = `${s.title ? `${s.title} · ` : ''}${s.actor}${s.project ? ` · ${s.project}` : ''}`;
        session.title = s.id;
        for (const r of ev.recap) {
          const t = el('section', 'turn recap');
          t.append(el('div', 'user', r.asked), el('div', 'answer', r.answer));
          log.appendChild(t);
        }
        return;
      }
      case 'user':
        turnOf(ev.turnId).appendChild(el('div', 'user', ev.text));
        return;
      case 'text': {
        const key = `${ev.turnId}/${ev.artifactId}`;
        let a = answers.get(key);
        if (!a) {
          a = el('div', 'answer', '');
          answers.set(key, a);
          turnOf(ev.turnId).appendChild(a);
        }
        a.textContent = ev.append ? a.textContent + ev.text : ev.text;
        return;
      }
      case 'tool': {
        const key = `${ev.turnId}/${ev.callId}`;
        let t = tools.get(key);
        if (!t) {
          t = el('div', 'tool');
          tools.set(key, t);
          turnOf(ev.turnId).appendChild(t);
        }
        const mark = ev.state === 'running' ? '→' : ev.state === 'done' ? '✓' : '✗';
        t.textContent = `${mark} ${ev.tool} ${ev.args}${ev.state === 'running' ? '' : ` — ${ev.state}`}${ev.summary ? `: ${ev.summary}` : ''}`;
        t.dataset.state = ev.state;
        return;
      }
      case 'approval':
        turnOf(ev.turnId).appendChild(approval(ev));
        return;
      case 'state':
        if (ev.state !== 'completed' || ev.text)
          turnOf(ev.turnId).appendChild(el('div', `state ${ev.state}`, ev.text ? `${ev.state}: ${ev.text}` : ev.state));
        return;
      case 'usage':
        turnOf(ev.turnId).appendChild(el('div', 'usage', ev.text));
        return;
      case 'error': {
        const e = el('div', 'error', ev.message);
        if (ev.hint) e.appendChild(el('div', 'hint', ev.hint));
        (ev.turnId ? turnOf(ev.turnId) : log).appendChild(e);
        return;
      }
      case 'busy':
        cancel.disabled = !ev.busy;
        send.disabled = ev.busy;
        return;
    }
  }

  window.addEventListener('message', (msg) => {
    const m = msg.data;
    if (!m || m.type !== 'events') return;
    if (m.reset) {
      log.replaceChildren();
      turns.clear();
      answers.clear();
      tools.clear();
    }
    for (const ev of m.events) render(ev);
    scroll();
  });

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || send.disabled) return;
    vscode.postMessage({ type: 'send', text });
    input.value = '';
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  cancel.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
  document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
  document.getElementById('resume').addEventListener('click', () => vscode.postMessage({ type: 'resumeSession' }));
  vscode.postMessage({ type: 'ready' });
})();
