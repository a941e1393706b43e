/// `GET /` of the development identity provider: mint a token for a made-up person and see how to sign in with it.
/// One self-contained page (no scripts or styles from elsewhere).
enum DevIdentityPage {
    static let html = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Lantern development sign-in</title>
    <style>
      body { font: 15px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
      label { display: inline-block; margin: 0 1rem .5rem 0; } input, select, button { font: inherit; padding: .2rem .4rem; }
      pre { background: #f4f4f4; padding: .8rem; white-space: pre-wrap; word-break: break-all; }
      .note { color: #666; font-size: 13px; }
    </style></head>
    <body>
    <h1>Lantern development sign-in</h1>
    <p>Made-up Google and Apple accounts for the local stack (<code>make up</code>). The same name is the same account
    every time. Identity trusts these tokens only with <code>LANTERN_ENVIRONMENT=development</code>.</p>
    <form id="f">
      <label>Name <input name="name" value="Ada" maxlength="40" required></label>
      <label>App <select name="app"><option>pairly</option><option>luckyday</option><option>astrosvitla</option><option>roastmelater</option><option>symbi</option></select></label>
      <label>Provider <select name="provider"><option>google</option><option>apple</option></select></label>
      <button>Mint an ID token</button>
    </form>
    <div id="out"></div>
    <p class="note">From a terminal: <code>make token APP=pairly NAME=Ada</code> mints one and signs in through the gateway.</p>
    <script>
    document.getElementById('f').addEventListener('submit', async (e) => {
      e.preventDefault();
      const form = Object.fromEntries(new FormData(e.target));
      const reply = await fetch('/token', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(form) });
      const json = await reply.json();
      const out = document.getElementById('out');
      out.innerHTML = '';
      const add = (title, text) => { const h = document.createElement('h3'); h.textContent = title; const p = document.createElement('pre'); p.textContent = text; out.append(h, p); };
      if (!reply.ok) { add('Refused', JSON.stringify(json, null, 2)); return; }
      add('ID token (' + json.provider + ', subject ' + json.subject + ')', json.idToken);
      add('Sign in through the gateway', "curl -s http://127.0.0.1:8080" + json.signIn.path + " -H 'Content-Type: application/json' -d '" + JSON.stringify(json.signIn.body) + "'");
    });
    </script>
    </body></html>
    """#
}
