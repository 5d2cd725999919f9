// scene.* and playmode.*: open and save scenes, enter and leave play mode.
using System;
using System.Collections.Generic;
using System.Linq;
using UnityEditor;
using UnityEditor.SceneManagement;
using UnityEngine.SceneManagement;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Scene files and play mode.</summary>
    public sealed class SceneCommands : IBridgeCommandSet
    {
        private readonly IMainThreadDispatcher _main;

        public SceneCommands(IMainThreadDispatcher main) { _main = main; }

        public void Register(CommandRegistry registry)
        {
            registry.Add("scene.info", async (args, token) => await _main.Run(() => (object)Info()), requiresIdleEditor: false);
            registry.Add("scene.open", async (args, token) => await _main.Run(() => Open(args)));
            registry.Add("scene.new", async (args, token) => await _main.Run(() => New(args)));
            registry.Add("scene.save", async (args, token) => await _main.Run(() => Save(args)));
            registry.Add("playmode.enter", async (args, token) => await _main.Run(() => SetPlaying(true)));
            registry.Add("playmode.exit", async (args, token) => await _main.Run(() => SetPlaying(false)), requiresIdleEditor: false);
            registry.Add("playmode.status", async (args, token) => await _main.Run(() => (object)PlayStatus()), requiresIdleEditor: false);
        }

        private static Dictionary<string, object> Info()
        {
            Scene scene = SceneManager.GetActiveScene();
            return new Dictionary<string, object>
            {
                { "name", scene.name }, { "path", scene.path }, { "dirty", scene.isDirty },
                { "roots", scene.GetRootGameObjects().Select(g => (object)g.name).ToList() },
                { "is_playing", EditorApplication.isPlaying },
            };
        }

        private static object Open(CommandArgs args)
        {
            if (EditorApplication.isPlaying) throw new BridgeException(ErrorCodes.PreconditionFailed, "Leave play mode before opening a scene");
            string path = args.GetString("path");
            if (!path.StartsWith("Assets/", StringComparison.Ordinal) || !path.EndsWith(".unity", StringComparison.Ordinal))
                throw new BridgeException(ErrorCodes.InvalidArgs, "path must look like Assets/.../Name.unity");
            Scene active = SceneManager.GetActiveScene();
            if (active.isDirty && !args.GetBool("discard_changes", false))
                throw new BridgeException(ErrorCodes.PreconditionFailed, "The open scene has unsaved changes: save it or pass discard_changes");
            EditorSceneManager.OpenScene(path, OpenSceneMode.Single);
            return Info();
        }

        private static object New(CommandArgs args)
        {
            if (EditorApplication.isPlaying) throw new BridgeException(ErrorCodes.PreconditionFailed, "Leave play mode before opening a new scene");
            Scene active = SceneManager.GetActiveScene();
            if (active.isDirty && !args.GetBool("discard_changes", false))
                throw new BridgeException(ErrorCodes.PreconditionFailed, "The open scene has unsaved changes: save it or pass discard_changes");
            bool empty = args.GetBool("empty", false);
            EditorSceneManager.NewScene(empty ? NewSceneSetup.EmptyScene : NewSceneSetup.DefaultGameObjects, NewSceneMode.Single);
            return Info();
        }

        private static object Save(CommandArgs args)
        {
            if (EditorApplication.isPlaying) throw new BridgeException(ErrorCodes.PreconditionFailed, "Scenes cannot be saved in play mode");
            Scene scene = SceneManager.GetActiveScene();
            string path = args.GetString("path", scene.path);
            if (string.IsNullOrEmpty(path)) throw new BridgeException(ErrorCodes.InvalidArgs, "This scene has never been saved: give a path like Assets/Scenes/Main.unity");
            if (!EditorSceneManager.SaveScene(scene, path)) throw new BridgeException(ErrorCodes.Internal, "Unity could not save the scene to " + path);
            return Info();
        }

        private static object SetPlaying(bool playing)
        {
            // Entering play mode usually reloads scripts: the bridge restarts and clients reconnect by themselves.
            if (playing && !EditorApplication.isPlaying) EditorApplication.EnterPlaymode();
            if (!playing && EditorApplication.isPlaying) EditorApplication.ExitPlaymode();
            return PlayStatus();
        }

        private static Dictionary<string, object> PlayStatus()
        {
            return new Dictionary<string, object>
            {
                { "is_playing", EditorApplication.isPlaying },
                { "will_change", EditorApplication.isPlayingOrWillChangePlaymode != EditorApplication.isPlaying },
                { "is_paused", EditorApplication.isPaused },
            };
        }
    }
}
