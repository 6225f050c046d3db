import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffFiles } from '../../../../src/application/plans/plan-diff-files.ts';
import { applyHunks, fileUnified, hunkTexts } from '../../../../src/protocol/client/index.ts';

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

describe("a plan's diff, file by file, and one side rebuilt from the other", () => {
  const files = diffFiles(DIFF);

  it('rebuilds either side of a file from the other', () => {
    const [n, added, gone] = files;
    assert.ok(n && added && gone);
    assert.equal(applyHunks(OLD, n, true), NEW);
    assert.equal(applyHunks(NEW, n, false), OLD);
    assert.equal(applyHunks('', added, true), 'fresh\nno newline');
    assert.equal(applyHunks('fresh\nno newline', added, false), '');
    assert.equal(applyHunks('bye\n', gone, true), '');
  });

  it('keeps the ending of a text past the last hunk, with or without a newline', () => {
    const n = files[0];
    assert.ok(n);
    const tail = `${OLD}thirteen\nfourteen\nfifteen\nsixteen`;
    assert.equal(applyHunks(tail, n, true), `${NEW}thirteen\nfourteen\nfifteen\nsixteen`);
  });

  it('refuses a text the hunks do not fit (the file changed since), rather than show a wrong side', () => {
    const n = files[0];
    assert.ok(n);
    assert.equal(applyHunks(OLD.replace('three', 'THREE'), n, true), undefined);
    assert.equal(applyHunks('one\n', n, true), undefined);
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

  it('writes a file back as unified text that reads as the same file', () => {
    for (const f of files) assert.deepEqual(diffFiles(fileUnified(f)), [f]);
    assert.match(fileUnified(files[1] ?? files[0]!), /^--- \/dev\/null\n\+\+\+ b\/new\.txt\n@@ -0,0 \+1,2 @@/m);
  });
});
