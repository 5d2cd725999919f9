// script.* and compile.*: write C# scripts with a content-hash precondition, read compiler errors.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using UnityEditor;
using UnityEditor.Compilation;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Compiler messages of the last script compilation, kept on disk across the domain reload that follows it.</summary>
    public sealed class CompileLog
    {
        private readonly object _lock = new object();
        private readonly string _path;
        private List<object> _messages = new List<object>();
        private double _startedUnix;
        private double _finishedUnix;

        public CompileLog(string path)
        {
            _path = path;
            Load();
        }

        /// <summary>Hooks Unity's compilation events.</summary>
        public void Attach()
        {
            CompilationPipeline.compilationStarted += OnStarted;
            CompilationPipeline.assemblyCompilationFinished += OnAssemblyFinished;
            CompilationPipeline.compilationFinished += OnFinished;
        }

        public void Detach()
        {
            CompilationPipeline.compilationStarted -= OnStarted;
            CompilationPipeline.assemblyCompilationFinished -= OnAssemblyFinished;
            CompilationPipeline.compilationFinished -= OnFinished;
        }

        public static double NowUnix() => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0;

        private void OnStarted(object context)
        {
            lock (_lock) { _messages = new List<object>(); _startedUnix = NowUnix(); }
        }

        private void OnAssemblyFinished(string assemblyPath, CompilerMessage[] messages)
        {
            lock (_lock)
            {
                foreach (CompilerMessage m in messages)
                {
                    _messages.Add(new Dictionary<string, object>
                    {
                        { "assembly", Path.GetFileName(assemblyPath) },
                        { "file", m.file }, { "line", m.line }, { "column", m.column },
                        { "severity", m.type == CompilerMessageType.Error ? "error" : "warning" },
                        { "message", m.message },
                    });
                }
            }
        }

        private void OnFinished(object context)
        {
            lock (_lock) _finishedUnix = NowUnix();
            Save();
        }

        public Dictionary<string, object> Snapshot(bool compiling)
        {
            lock (_lock)
            {
                var errors = _messages.Cast<Dictionary<string, object>>().Where(m => (string)m["severity"] == "error").Cast<object>().ToList();
                var warnings = _messages.Cast<Dictionary<string, object>>().Where(m => (string)m["severity"] != "error").Cast<object>().ToList();
                return new Dictionary<string, object>
                {
                    { "compiling", compiling }, { "started_unix", _startedUnix }, { "finished_unix", _finishedUnix },
                    { "errors", errors }, { "warnings", warnings },
                };
            }
        }

        private void Save()
        {
            string json;
            lock (_lock)
            {
                json = Json.Serialize(new Dictionary<string, object>
                {
                    { "started_unix", _startedUnix }, { "finished_unix", _finishedUnix }, { "messages", _messages },
                });
            }
            try { AtomicFile.WriteAllText(_path, json); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        }

        private void Load()
        {
            try
            {
                if (!File.Exists(_path)) return;
                var doc = Json.Parse(File.ReadAllText(_path)) as Dictionary<string, object>;
                if (doc == null) return;
                _startedUnix = Convert.ToDouble(doc["started_unix"]);
                _finishedUnix = Convert.ToDouble(doc["finished_unix"]);
                _messages = (doc["messages"] as List<object>) ?? new List<object>();
            }
            catch (Exception) { _messages = new List<object>(); }
        }
    }

    /// <summary>Writes and reads scripts under Assets/ and reports compilation.</summary>
    public sealed class ScriptCommands : IBridgeCommandSet
    {
        private readonly IMainThreadDispatcher _main;
        private readonly CompileLog _log;
        private readonly string _projectRoot;

        public ScriptCommands(IMainThreadDispatcher main, CompileLog log, string projectRoot)
        {
            _main = main;
            _log = log;
            _projectRoot = Path.GetFullPath(projectRoot);
        }

        public void Register(CommandRegistry registry)
        {
            registry.Add("script.write", async (args, token) => await Write(args));
            registry.AddSync("script.read", Read);
            registry.Add("compile.status", async (args, token) => await _main.Run(() => (object)_log.Snapshot(EditorApplication.isCompiling)), requiresIdleEditor: false);
            registry.Add("compile.request", async (args, token) => await _main.Run(() =>
            {
                AssetDatabase.Refresh();
                CompilationPipeline.RequestScriptCompilation();
                return (object)new Dictionary<string, object> { { "requested_unix", CompileLog.NowUnix() } };
            }));
        }

        public static string Sha256(byte[] bytes)
        {
            using (var sha = SHA256.Create())
                return BitConverter.ToString(sha.ComputeHash(bytes)).Replace("-", "").ToLowerInvariant();
        }

        /// <summary>"Assets/..." → absolute path, refusing anything outside Assets/.</summary>
        private string FullPath(string assetPath)
        {
            if (!assetPath.StartsWith("Assets/", StringComparison.Ordinal) || !assetPath.EndsWith(".cs", StringComparison.Ordinal))
                throw new BridgeException(ErrorCodes.InvalidArgs, "path must look like Assets/.../Name.cs");
            string full = Path.GetFullPath(Path.Combine(_projectRoot, assetPath));
            string assets = Path.Combine(_projectRoot, "Assets") + Path.DirectorySeparatorChar;
            if (!full.StartsWith(assets, StringComparison.Ordinal))
                throw new BridgeException(ErrorCodes.InvalidArgs, "path escapes the Assets folder");
            return full;
        }

        private async System.Threading.Tasks.Task<object> Write(CommandArgs args)
        {
            string assetPath = args.GetString("path");
            string full = FullPath(assetPath);
            byte[] content = new UTF8Encoding(false).GetBytes(args.GetString("content"));
            string newHash = Sha256(content);
            string currentHash = File.Exists(full) ? Sha256(File.ReadAllBytes(full)) : "";
            if (args.Has("expected_hash") && args.GetString("expected_hash") != currentHash)
            {
                // The file changed since the caller read it (or this edit already landed): do not overwrite blindly.
                throw new BridgeException(ErrorCodes.PreconditionFailed,
                    "expected_hash does not match " + assetPath + " (current hash: " + (currentHash == "" ? "none, file absent" : currentHash) + ")");
            }
            bool changed = newHash != currentHash;
            if (changed)
            {
                Directory.CreateDirectory(Path.GetDirectoryName(full));
                File.WriteAllBytes(full, content);
                await _main.Run(() => { AssetDatabase.ImportAsset(assetPath); return true; });
            }
            return new Dictionary<string, object>
            {
                { "path", assetPath }, { "hash", newHash }, { "previous_hash", currentHash },
                { "changed", changed }, { "written_unix", CompileLog.NowUnix() },
            };
        }

        private object Read(CommandArgs args)
        {
            string assetPath = args.GetString("path");
            string full = FullPath(assetPath);
            if (!File.Exists(full)) throw new BridgeException(ErrorCodes.NotFound, "No script at " + assetPath);
            byte[] bytes = File.ReadAllBytes(full);
            return new Dictionary<string, object>
            {
                { "path", assetPath }, { "content", new UTF8Encoding(false).GetString(bytes) }, { "hash", Sha256(bytes) },
            };
        }
    }
}
