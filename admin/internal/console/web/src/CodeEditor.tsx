import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { StreamLanguage, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { groovy } from "@codemirror/legacy-modes/mode/groovy";
import { javascript } from "@codemirror/legacy-modes/mode/javascript";
import { powerShell } from "@codemirror/legacy-modes/mode/powershell";
import { python } from "@codemirror/legacy-modes/mode/python";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { useEffect, useRef } from "react";
import { ScriptType } from "./gen/carillon/v1/executor_pb";

// nonce is the style nonce the admin gave this page (index.html's meta
// element): CodeMirror adds its styles as a style element, which the
// console's Content-Security-Policy allows only with it.
const nonce = document.querySelector<HTMLMetaElement>('meta[name="carillon-style-nonce"]')?.content ?? "";

// CodeEditor edits a script's source in CodeMirror, highlighted for its
// interpreter. It is its own chunk, loaded when a script job is edited, so
// the first load stays small.
export default function CodeEditor({ type, value, onChange }: { type: ScriptType; value: string; onChange: (v: string) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const change = useRef(onChange);
  change.current = onChange;
  useEffect(() => {
    const mode = type === ScriptType.PYTHON ? python : type === ScriptType.NODEJS ? javascript : type === ScriptType.POWERSHELL ? powerShell
      : type === ScriptType.GROOVY ? groovy : shell;
    const view = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          EditorView.cspNonce.of(nonce), lineNumbers(), history(), keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap]),
          StreamLanguage.define(mode), syntaxHighlighting(defaultHighlightStyle),
          EditorView.updateListener.of((u) => { if (u.docChanged) change.current(u.state.doc.toString()); }),
          EditorView.contentAttributes.of({ "aria-label": "script source" }),
          EditorView.theme({ "&": { minHeight: "12rem", fontSize: "12px" }, ".cm-scroller": { fontFamily: "ui-monospace, monospace" } }),
        ],
      }),
    });
    return () => view.destroy();
    // The editor owns the text once made; a new type makes a new editor.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [type]);
  return <div ref={host} data-testid="code-editor" className="mt-1 rounded border border-slate-300 bg-white" />;
}
