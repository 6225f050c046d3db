import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch, hunkTexts, parseUnifiedDiff } from '../../clients/vscode/src/core/diff-texts.ts';

const OLD = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve']
  .map((l) => `${l}\n`)
  .join('');
const NEW = OLD.replace('two\n', 'TWO\n').replace('eleven\n', 'eleven\nand a half\n');

const DIFF = `diff --git a/n.txt b/n.txt
index 1111111..2222222 100644
--- a/n.txt
+++ b/n.txt
@@ -1,5 +1,5 @@
 one
-two
+TWO
 three
 four
 five
@@ -9,4 +9,5 @@ eight
 nine
 ten
 eleven
+and a half
 twelve
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+fresh
+no newline
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..5555555
Binary files /dev/null and b/logo.png differ
`;

describe('diff texts for the diff editor', () => {
  const files = parseUnifiedDiff(DIFF);

  it('reads each file of a git diff: paths, added and deleted sides, binary', () => {
    assert.deepEqual(
      files.map((f) => [f.oldPath, f.newPath, f.binary, f.hunks.length]),
      [
        ['n.txt', 'n.txt', false, 2],
        [undefined, 'new.txt', false, 1],
        ['gone.txt', undefined, false, 1],
        [undefined, 'logo.png', true, 0],
      ],
    );
  });

  it('rebuilds either side of a file from the other', () => {
    const [n, added, gone] = files;
    assert.ok(n && added && gone);
    assert.equal(applyPatch(OLD, n, true), NEW);
    assert.equal(applyPatch(NEW, n, false), OLD);
    assert.equal(applyPatch('', added, true), 'fresh\nno newline');
    assert.equal(applyPatch('fresh\nno newline', added, false), '');
    assert.equal(applyPatch('bye\n', gone, true), '');
  });

  it('refuses a text the patch does not fit (the file changed since), rather than show a wrong side', () => {
    const n = files[0];
    assert.ok(n);
    assert.equal(applyPatch(OLD.replace('three', 'THREE'), n, true), undefined);
    assert.equal(applyPatch('one\n', n, true), undefined);
  });

  it('shows the hunks alone, with the unchanged stretches marked, when no side can be read', () => {
    const n = files[0];
    assert.ok(n);
    const t = hunkTexts(n);
    assert.equal(t.original, 'one\ntwo\nthree\nfour\nfive\n⋯ 3 unchanged lines ⋯\nnine\nten\neleven\ntwelve\n');
    assert.equal(
      t.modified,
      'one\nTWO\nthree\nfour\nfive\n⋯ 3 unchanged lines ⋯\nnine\nten\neleven\nand a half\ntwelve\n',
    );
  });
});
