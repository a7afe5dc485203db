// Pocket chat demo: the app (Jetpack Compose) and chat-core (its logic, tested on the host JVM by
// chat-core/test.sh). Pocket comes from the local Maven repository `pocket package` writes
// (gradle.properties: pocketMavenRepo, relative to this folder; -PpocketMavenRepo=... overrides).
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        maven {
            name = "pocket"
            url = uri(file(providers.gradleProperty("pocketMavenRepo").getOrElse("../../dist/maven")))
        }
        google()
        mavenCentral()
    }
}

rootProject.name = "PocketChat"
include(":app", ":chat-core")
