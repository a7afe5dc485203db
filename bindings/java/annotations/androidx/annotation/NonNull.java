/*
 * Compile-only stand-in for AndroidX's androidx.annotation.NonNull (same name, retention and
 * targets). Pocket's Java API is compiled against it but pocket.jar does not contain it: apps
 * that use AndroidX have the real class, and the Kotlin compiler honours the annotation by its
 * name alone, with or without the class on its classpath. See bindings/java/README.md.
 */
package androidx.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** The annotated value, parameter or return value is never null. */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.METHOD, ElementType.PARAMETER, ElementType.FIELD, ElementType.LOCAL_VARIABLE,
    ElementType.ANNOTATION_TYPE, ElementType.PACKAGE})
public @interface NonNull {}
