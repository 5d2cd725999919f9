// Starts the bridge when the editor loads scripts and keeps status.json in step with compiling and reloading.
using System;
using System.Collections.Generic;
using System.IO;
using UnityEditor;
using UnityEditor.Compilation;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>
    /// The editor side of agentsdk: a loopback bridge started on every script load.
    /// Files live in Library/AgentSdkBridge (connection.json holds the token: keep Library out of version control).
    /// Set AGENTSDK_UNITY_PORT to pin the port, AGENTSDK_UNITY_BRIDGE=0 to disable the bridge.
    /// </summary>
    [InitializeOnLoad]
    public static class AgentSdkBridgeEditor
    {
        private static BridgeServer _server;
        private static BridgeFiles _files;
        private static EditorMainThread _main;
        private static CompileLog _compileLog;
        private static ConsoleCommands _console;
        private static readonly SettableEditorState State = new SettableEditorState();

        static AgentSdkBridgeEditor()
        {
            if (Environment.GetEnvironmentVariable("AGENTSDK_UNITY_BRIDGE") == "0") return;
            Start();
        }

        /// <summary>The port the bridge listens on (0 when stopped).</summary>
        public static int Port => _server == null ? 0 : _server.Port;

        /// <summary>Starts the bridge (idempotent); called by the static constructor after each domain reload.</summary>
        public static void Start()
        {
            if (_server != null) return;
            string projectRoot = Path.GetDirectoryName(Application.dataPath);
            _files = new BridgeFiles(Path.Combine(Path.Combine(projectRoot, "Library"), "AgentSdkBridge"));
            _main = new EditorMainThread();
            _main.Attach();
            _compileLog = new CompileLog(Path.Combine(_files.Directory, "compile.json"));
            _compileLog.Attach();
            _console = new ConsoleCommands();
            _console.Attach();

            var registry = new CommandRegistry();
            registry.AddSet(new ScriptCommands(_main, _compileLog, projectRoot));
            registry.AddSet(_console);
            registry.AddSet(new GameObjectCommands(_main));
            registry.AddSet(new SceneCommands(_main));
            registry.AddSet(new ScreenshotCommands(_main));
            registry.AddSet(new TestRunnerCommands(_main));

            var options = new BridgeOptions { Token = _files.LoadOrCreateToken(), ServerName = "unity-" + Application.unityVersion };
            var journal = new ResultJournal(_files.JournalDirectory);
            journal.WriteFailed += (id, e) => Debug.LogWarning("[agentsdk bridge] response " + id + " kept in memory only: " + e.Message);
            _server = new BridgeServer(options, registry, journal, State);
            _server.Log += message => Debug.Log("[agentsdk bridge] " + message);
            StartOnStablePort(options);

            State.Current = EditorApplication.isCompiling ? EditorStates.Compiling : EditorStates.Ready;
            _files.WriteConnection(_server.Port, options.Token);
            _files.WriteStatus(State.Current);

            CompilationPipeline.compilationStarted += OnCompilationStarted;
            CompilationPipeline.compilationFinished += OnCompilationFinished;
            AssemblyReloadEvents.beforeAssemblyReload += OnBeforeReload;
            EditorApplication.playModeStateChanged += OnPlayModeChanged;
            EditorApplication.quitting += OnQuitting;
        }

        /// <summary>Reuses the previous port so clients reconnect to the same place after a domain reload.</summary>
        private static void StartOnStablePort(BridgeOptions options)
        {
            var candidates = new List<int>();
            int pinned;
            if (int.TryParse(Environment.GetEnvironmentVariable("AGENTSDK_UNITY_PORT"), out pinned)) candidates.Add(pinned);
            int previous = PreviousPort();
            if (previous > 0) candidates.Add(previous);
            candidates.Add(0);
            foreach (int port in candidates)
            {
                options.Port = port;
                try
                {
                    _server.Start();
                    return;
                }
                catch (System.Net.Sockets.SocketException) when (port != 0)
                {
                    Debug.LogWarning("[agentsdk bridge] port " + port + " is taken; trying another");
                }
            }
        }

        private static int PreviousPort()
        {
            try
            {
                if (!File.Exists(_files.ConnectionPath)) return 0;
                var doc = Json.Parse(File.ReadAllText(_files.ConnectionPath)) as Dictionary<string, object>;
                object port;
                return doc != null && doc.TryGetValue("port", out port) && port is long ? (int)(long)port : 0;
            }
            catch (Exception) { return 0; }
        }

        private static void OnCompilationStarted(object context)
        {
            State.Current = EditorStates.Compiling;
            _files.WriteStatus(EditorStates.Compiling);
        }

        private static void OnCompilationFinished(object context)
        {
            State.Current = EditorStates.Ready;
            _files.WriteStatus(EditorStates.Ready);
        }

        private static void OnPlayModeChanged(PlayModeStateChange change)
        {
            _files.WriteStatus(State.Current, change.ToString());
        }

        /// <summary>Statics vanish in a reload: say so, free the port, and let the next load start again.</summary>
        private static void OnBeforeReload()
        {
            State.Current = EditorStates.Reloading;
            _files.WriteStatus(EditorStates.Reloading);
            Shutdown();
        }

        private static void OnQuitting()
        {
            Shutdown();
            _files.WriteStatus(EditorStates.Stopped);
        }

        private static void Shutdown()
        {
            if (_server == null) return;
            _server.Stop();
            _server = null;
            _main.Detach();
            _compileLog.Detach();
            _console.Detach();
            CompilationPipeline.compilationStarted -= OnCompilationStarted;
            CompilationPipeline.compilationFinished -= OnCompilationFinished;
            AssemblyReloadEvents.beforeAssemblyReload -= OnBeforeReload;
            EditorApplication.playModeStateChanged -= OnPlayModeChanged;
            EditorApplication.quitting -= OnQuitting;
        }
    }
}
