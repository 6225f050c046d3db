import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffFiles, storedDiffFiles } from '../../../../src/application/plans/plan-diff-files.ts';

/** `git diff -M` of a repository: added, binary, deleted, a quoted path, a rename with an edit, no newline; then a mode change and a pure rename. */
const GIT_DIFF = `diff --git a/added.txt b/added.txt
new file mode 100644
index 0000000..3e75765
--- /dev/null
+++ b/added.txt
@@ -0,0 +1 @@
+new
diff --git a/bin b/bin
index bdc955b..8835708 100644
Binary files a/bin and b/bin differ
diff --git a/del.txt b/del.txt
deleted file mode 100644
index 2fa992c..0000000
--- a/del.txt
+++ /dev/null
@@ -1 +0,0 @@
-keep
diff --git "a/dir/tab\\t\\303\\251.txt" "b/dir/tab\\t\\303\\251.txt"
new file mode 100644
index 0000000..bca70f3
--- /dev/null
+++ "b/dir/tab\\t\\303\\251.txt"
@@ -0,0 +1 @@
+q
diff --git a/old.txt b/new name.txt
similarity index 80%
rename from old.txt
rename to new name.txt
index 0ec1772..49ab77b 100644
--- a/old.txt
+++ b/new name.txt	
@@ -2,4 +2,4 @@ r1
 r2
 r3
 r4
-r5
+r6
diff --git a/x.txt b/x.txt
index de98044..36ef1ba 100644
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@
 a
-b
-c
+B
+c
\\ No newline at end of file
diff --git a/added.txt b/added.txt
old mode 100644
new mode 100755
diff --git a/x.txt b/y.txt
similarity index 100%
rename from x.txt
rename to y.txt
`;

describe("plan/diff's files, read from git's unified diff", () => {
  const files = diffFiles(GIT_DIFF, 'local/repo');

  it('names each file by its paths relative to the resource (no a/ b/, null for a missing side) and its status', () => {
    assert.deepEqual(
      files.map((f) => [f.resource, f.oldPath, f.newPath, f.status, f.binary ?? false, f.hunks.length]),
      [
        ['local/repo', null, 'added.txt', 'added', false, 1],
        ['local/repo', 'bin', 'bin', 'modified', true, 0],
        ['local/repo', 'del.txt', null, 'deleted', false, 1],
        ['local/repo', null, 'dir/tab\té.txt', 'added', false, 1],
        ['local/repo', 'old.txt', 'new name.txt', 'renamed', false, 1],
        ['local/repo', 'x.txt', 'x.txt', 'modified', false, 1],
        ['local/repo', 'added.txt', 'added.txt', 'modified', false, 0],
        ['local/repo', 'x.txt', 'y.txt', 'renamed', false, 0],
      ],
    );
  });

  it('gives each hunk its lines and marks the line that ends its side without a newline', () => {
    assert.deepEqual(files[5]?.hunks, [
      {
        oldStart: 1,
        oldLines: 3,
        newStart: 1,
        newLines: 3,
        lines: [
          { kind: ' ', text: 'a' },
          { kind: '-', text: 'b' },
          { kind: '-', text: 'c' },
          { kind: '+', text: 'B' },
          { kind: '+', text: 'c', noNewline: true },
        ],
      },
    ]);
  });

  it('has no files for no changes', () => {
    assert.deepEqual(diffFiles(''), []);
  });

  it("a stored diff's files get their resources in order, or none when the counts disagree", () => {
    const one = (n: number) => Array.from({ length: n }, () => ({}));
    const stored = storedDiffFiles(GIT_DIFF, [
      { resource: 'a', files: one(3) },
      { resource: 'b', files: one(5) },
    ]);
    assert.deepEqual(
      stored.map((f) => f.resource),
      ['a', 'a', 'a', 'b', 'b', 'b', 'b', 'b'],
    );
    const unknown = storedDiffFiles(GIT_DIFF, [{ resource: 'a', files: one(2) }]);
    assert.ok(unknown.every((f) => f.resource === undefined));
  });
});
