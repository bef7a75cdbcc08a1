/**
 * What each git command does to a repository, with the reason beside it:
 * the table the spy's list of writing verbs (test/helpers/gitSpy.ts) is
 * checked against. "Writes" means that some form of it changes the
 * repository (objects, packs, files under .git), the index, the work tree,
 * the refs or the config. Two kinds of writing do not count, as in the
 * spy's list: a reader's option that sends its output to a file the caller
 * names (`log --output`, `archive -o`), and the refresh of the index's cached
 * stat data that status and diff make on the side.
 *
 * Every command of `git --list-cmds=main` must be here: one a newer git adds
 * fails the check until someone says whether it writes. A few commands of
 * gits newer than the machine's are classified already.
 */
const R = 'reads';
const W = 'writes';
export type Effect = typeof R | typeof W;

export const GIT_COMMANDS: Readonly<Record<string, Effect>> = {
  'add': W, // stages files: the index, and blobs in the object store
  'add--interactive': W, // the helper behind `add -i` (gone in newer gits): the index
  'am': W, // applies mailed patches as commits: work tree, index, HEAD
  'annotate': R, // blame in another layout
  'apply': W, // patches the work tree, or the index with --cached
  'archive': R, // prints an archive of a tree (-o names an output file)
  'backfill': W, // (git 2.49) downloads missing objects into a partial clone
  'bisect': W, // checks out commits and writes refs/bisect/*
  'bisect--helper': W, // bisect's internals (gone in newer gits)
  'blame': R, // prints who changed each line
  'branch': W, // creates, moves and deletes refs/heads/* (listing reads: a read form)
  'bugreport': W, // writes a report file into the current folder, the work tree
  'bundle': W, // `create` writes a bundle file, `unbundle` writes objects
  'cat-file': R, // prints objects
  'check-attr': R, // prints attributes
  'check-ignore': R, // prints which paths are ignored
  'check-mailmap': R, // prints mapped identities
  'check-ref-format': R, // checks a name, touches nothing
  'checkout': W, // switches branches: work tree, index, HEAD
  'checkout--worker': W, // checkout's parallel worker: the work tree
  'checkout-index': W, // copies files from the index into the work tree
  'cherry': R, // lists commits not yet upstream
  'cherry-pick': W, // makes commits: work tree, index, HEAD
  'clean': W, // deletes untracked files from the work tree
  'clone': W, // makes a repository and its work tree
  'column': R, // lays out its standard input in columns
  'commit': W, // makes a commit: objects, HEAD, the index (with -a)
  'commit-graph': W, // `write` writes objects/info/commit-graph
  'commit-tree': W, // writes a commit object
  'config': W, // sets, unsets and renames keys (--get and --list read: a read form)
  'count-objects': R, // counts objects
  'credential': W, // `approve` and `reject` make the credential helpers store or erase secrets
  'credential-cache': W, // keeps credentials in a cache daemon
  'credential-cache--daemon': W, // that daemon: a socket and the credentials it holds
  'credential-store': W, // stores credentials in ~/.git-credentials
  'daemon': W, // serves repositories; with receive-pack enabled it takes pushes
  'describe': R, // names a commit after a tag
  'diagnose': W, // writes a zip archive into the current folder
  'diff': R, // prints changes (its stat-cache refresh does not count)
  'diff-files': R, // prints work tree against index
  'diff-index': R, // prints a tree against the index or work tree
  'diff-pairs': R, // (git 2.50) prints diffs of the pairs it is given
  'diff-tree': R, // prints changes between trees
  'difftool': W, // starts a diff tool, which may edit work-tree files (--dir-diff copies edits back)
  'difftool--helper': W, // difftool's internals
  'env--helper': R, // prints a setting of the environment
  'fast-export': R, // prints history as a stream (--export-marks names an output file)
  'fast-import': W, // writes objects and refs from a stream
  'fetch': W, // writes objects, refs/remotes/* and FETCH_HEAD (the hand-off: a shaped write)
  'fetch-pack': W, // receives objects into the object store
  'filter-branch': W, // rewrites history and refs
  'fmt-merge-msg': R, // prints a merge message
  'for-each-ref': R, // prints refs
  'for-each-repo': W, // runs a git command in every repository a config key lists (maintenance's runner)
  'format-patch': W, // writes one patch file per commit into the current folder
  'fsck': W, // checks objects; --lost-found writes .git/lost-found
  'fsck-objects': W, // fsck by its old name
  'fsmonitor--daemon': W, // a daemon with its socket under .git
  'gc': W, // packs, prunes and rewrites refs
  'get-tar-commit-id': R, // reads a commit id from an archive on standard input
  'grep': R, // prints matches
  'hash-object': W, // -w writes a blob (without it, it only prints the id: a read form)
  'help': R, // shows documentation
  'hook': W, // runs hooks, which may do anything
  'http-backend': W, // serves repositories over HTTP, pushes included
  'http-fetch': W, // downloads objects into the object store
  'http-push': W, // pushes over WebDAV and updates the local remote refs
  'imap-send': R, // sends patches to an IMAP folder; writes nothing here
  'index-pack': W, // writes a pack's index, and the pack with --stdin
  'init': W, // makes a repository
  'init-db': W, // init by its old name
  'instaweb': W, // writes .git/gitweb and starts a web server
  'interpret-trailers': W, // --in-place rewrites the files it is given
  'last-modified': R, // (git 2.52) prints the commit that last changed each path
  'log': R, // prints history (--output names an output file)
  'ls-files': R, // prints the index
  'ls-remote': R, // prints a remote's refs
  'ls-tree': R, // prints a tree
  'mailinfo': W, // writes the message and the patch into the two files it is given
  'mailsplit': W, // writes one file per message into the folder it is given
  'maintenance': W, // runs gc, repacks, prefetches; `register` writes config
  'merge': W, // makes a merge: work tree, index, HEAD
  'merge-base': R, // prints a common ancestor
  'merge-file': W, // writes the merge result into the first file it is given
  'merge-index': W, // runs a merge program for each unmerged entry of the index
  'merge-octopus': W, // a merge strategy: index and work tree
  'merge-one-file': W, // merge-index's default program: index and work tree
  'merge-ours': W, // a merge strategy: the index
  'merge-recursive': W, // a merge strategy: index and work tree
  'merge-recursive-ours': W, // a merge strategy: index and work tree
  'merge-recursive-theirs': W, // a merge strategy: index and work tree
  'merge-resolve': W, // a merge strategy: index and work tree
  'merge-subtree': W, // a merge strategy: index and work tree
  'merge-tree': W, // --write-tree writes the merged trees as objects
  'mergetool': W, // starts a merge tool on conflicted files: work tree, index
  'mktag': W, // writes a tag object
  'mktree': W, // writes a tree object
  'multi-pack-index': W, // writes, expires and repacks the multi-pack index
  'mv': W, // moves files: work tree and index
  'name-rev': R, // prints names for commits
  'notes': W, // adds, edits and removes notes: objects and refs/notes/*
  'pack-objects': W, // writes pack files (or prints one with --stdout)
  'pack-redundant': R, // lists packs that others contain; deletes nothing
  'pack-refs': W, // rewrites loose refs into packed-refs
  'patch-id': R, // prints ids of patches
  'pickaxe': R, // blame by another name
  'prune': W, // deletes unreachable objects
  'prune-packed': W, // deletes loose objects that packs hold
  'pull': W, // fetches and merges or rebases: everything
  'push': W, // updates another repository's refs and the local remote refs
  'quiltimport': W, // applies a quilt series as commits
  'range-diff': R, // prints how two ranges differ
  'read-tree': W, // reads trees into the index (and the work tree with -u)
  'rebase': W, // rewrites commits: work tree, index, refs
  'receive-pack': W, // takes a push: objects and refs
  'reflog': W, // `expire` and `delete` rewrite reflogs (showing one reads: a read form)
  'refs': W, // (git 2.46) `migrate` rewrites the ref storage
  'remote': W, // adds, removes and renames remotes: config and refs (-v, get-url and show read: a read form)
  'remote-ext': W, // a remote helper: fetches objects in, pushes refs out
  'remote-fd': W, // a remote helper: fetches objects in, pushes refs out
  'remote-ftp': W, // a remote helper: fetches objects in
  'remote-ftps': W, // a remote helper: fetches objects in
  'remote-http': W, // a remote helper: fetches objects in, pushes refs out
  'remote-https': W, // a remote helper: fetches objects in, pushes refs out
  'repack': W, // rewrites packs
  'replace': W, // writes refs/replace/*
  'replay': W, // (git 2.44) writes the replayed commits as objects, and in newer gits updates refs
  'request-pull': R, // prints a summary of changes
  'rerere': W, // records resolutions in .git/rr-cache and reapplies them to the work tree
  'reset': W, // moves HEAD, rewrites the index and the work tree
  'restore': W, // rewrites work-tree files or the index
  'rev-list': R, // prints commits
  'rev-parse': R, // prints names and paths
  'revert': W, // makes commits: work tree, index, HEAD
  'rm': W, // removes files from the work tree and the index
  'send-pack': W, // pushes to another repository
  'sh-i18n--envsubst': R, // substitutes variables in text for shell scripts
  'shell': W, // a login shell for git-only accounts: runs receive-pack
  'shortlog': R, // prints a summary of history
  'show': R, // prints objects
  'show-branch': R, // prints branches and their commits
  'show-index': R, // prints a pack index
  'show-ref': R, // prints refs
  'sparse-checkout': W, // writes config, the sparse patterns and the work tree
  'stage': W, // add by another name
  'stash': W, // saves and drops changes: refs/stash, work tree, index (list and show read: a read form)
  'status': R, // prints the state of the work tree (its stat-cache refresh does not count)
  'stripspace': R, // cleans up its standard input
  'submodule': W, // adds, updates and deinits submodules: config, work tree, modules
  'submodule--helper': W, // submodule's internals
  'subtree': W, // merges and splits subtrees: commits and refs
  'switch': W, // switches branches: work tree, index, HEAD
  'symbolic-ref': W, // sets or deletes a symbolic ref (reading one: a read form)
  'tag': W, // creates and deletes tags (listing reads)
  'unpack-file': W, // writes a blob into a temporary file in the current folder
  'unpack-objects': W, // writes objects from a pack
  'update-index': W, // rewrites the index
  'update-ref': W, // writes refs
  'update-server-info': W, // writes info/refs and objects/info/packs
  'upload-archive': R, // sends an archive to a client
  'upload-archive--writer': R, // upload-archive's internals
  'upload-pack': R, // sends objects to a fetching client
  'var': R, // prints a variable
  'verify-commit': R, // checks a commit's signature
  'verify-pack': R, // checks a pack
  'verify-tag': R, // checks a tag's signature
  'version': R, // prints the version
  'web--browse': R, // starts a browser
  'whatchanged': R, // prints history
  'worktree': W, // adds, moves and removes work trees (listing reads: a read form)
  'write-tree': W, // writes the index as tree objects
};
