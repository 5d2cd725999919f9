// Runs the REAL Unity handlers and bootstrap (tools/unity/unity-package/Editor/Unity) on top of the
// behavioural stubs in ../stubs, with this thread as the editor's main thread.
using System;
using System.IO;
using System.Threading;
using AgentSdk.Unity.Bridge.Editor;
using UnityEditor;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.TestHost
{
    public static class StubEditorHost
    {
        public static int Main(string[] argv)
        {
            int i = Array.IndexOf(argv, "--project");
            if (i < 0 || i + 1 >= argv.Length) { Console.Error.WriteLine("usage: stub-editor.exe --project DIR"); return 2; }
            string project = Path.GetFullPath(argv[i + 1]);
            Directory.CreateDirectory(Path.Combine(project, "Assets"));
            Application.dataPath = Path.Combine(project, "Assets");

            // A default scene like Unity's: a main camera and a light.
            new GameObject("Main Camera").AddComponent(typeof(Camera));
            new GameObject("Directional Light").AddComponent(typeof(Light));

            // Touching the class runs its [InitializeOnLoad] static constructor, which starts the bridge.
            StubEditor.AfterReload = AgentSdkBridgeEditor.Start;
            Console.Out.WriteLine("LISTENING " + AgentSdkBridgeEditor.Port);
            Console.Out.Flush();

            bool stdinOpen = true;
            var watcher = new Thread(() => { Console.In.ReadToEnd(); stdinOpen = false; }) { IsBackground = true };
            watcher.Start();
            while (stdinOpen)
            {
                StubEditor.Frame();
                Thread.Sleep(5);
            }
            StubEditor.Quit();
            Environment.Exit(0);
            return 0;
        }
    }
}
